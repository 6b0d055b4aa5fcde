import protobuf from 'protobufjs';
import { OTLP_PROTO_TEXT } from './otlp-proto-text';

/** The protobuf types the receiver uses, from the definitions in otlp-proto-text.ts. */
export interface OtlpTypes {
  readonly logsRequest: protobuf.Type;
  readonly metricsRequest: protobuf.Type;
  readonly tracesRequest: protobuf.Type;
  readonly logsResponse: protobuf.Type;
  readonly metricsResponse: protobuf.Type;
  readonly tracesResponse: protobuf.Type;
  readonly status: protobuf.Type;
}

let loaded: OtlpTypes | null = null;

/** Parses the definitions once (at the receiver's start) and returns the resolved types. */
export function otlpTypes(): OtlpTypes {
  if (loaded !== null) return loaded;
  const root = protobuf.parse(OTLP_PROTO_TEXT, { keepCase: false }).root;
  root.resolveAll();
  const type = (name: string): protobuf.Type => root.lookupType(`otlp.${name}`);
  loaded = {
    logsRequest: type('ExportLogsServiceRequest'),
    metricsRequest: type('ExportMetricsServiceRequest'),
    tracesRequest: type('ExportTraceServiceRequest'),
    logsResponse: type('ExportLogsServiceResponse'),
    metricsResponse: type('ExportMetricsServiceResponse'),
    tracesResponse: type('ExportTraceServiceResponse'),
    status: type('RpcStatus'),
  };
  return loaded;
}
