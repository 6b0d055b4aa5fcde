import protobuf from 'protobufjs';
import { OTLP_DESCRIPTOR } from './otlp-descriptor';

/** The protobuf types the receiver uses, from the descriptor generated in otlp-descriptor.ts. */
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

const COLLECTOR = 'opentelemetry.proto.collector';

/** Builds the types once (at the receiver's start) and returns them resolved. */
export function otlpTypes(): OtlpTypes {
  if (loaded !== null) return loaded;
  const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR);
  root.resolveAll();
  const type = (name: string): protobuf.Type => root.lookupType(name);
  loaded = {
    logsRequest: type(`${COLLECTOR}.logs.v1.ExportLogsServiceRequest`),
    metricsRequest: type(`${COLLECTOR}.metrics.v1.ExportMetricsServiceRequest`),
    tracesRequest: type(`${COLLECTOR}.trace.v1.ExportTraceServiceRequest`),
    logsResponse: type(`${COLLECTOR}.logs.v1.ExportLogsServiceResponse`),
    metricsResponse: type(`${COLLECTOR}.metrics.v1.ExportMetricsServiceResponse`),
    tracesResponse: type(`${COLLECTOR}.trace.v1.ExportTraceServiceResponse`),
    status: type('google.rpc.Status'),
  };
  return loaded;
}
