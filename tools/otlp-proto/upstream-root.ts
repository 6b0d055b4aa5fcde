import path from 'node:path';
import protobuf from 'protobufjs';
import { repoRoot } from '../repo-root';

/** The vendored opentelemetry-proto tree (see its UPSTREAM.md for the version). */
export const UPSTREAM_FOLDER = path.join(repoRoot(), 'src', 'otlp', 'proto', 'vendor');

/** The upstream files the receiver's subset is cut from: the three export services and what they import. */
export const UPSTREAM_FILES = [
  'opentelemetry/proto/collector/logs/v1/logs_service.proto',
  'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
] as const;

/** Parses the vendored upstream files (field names camelCased, as the receiver reads them). */
export function upstreamRoot(folder: string = UPSTREAM_FOLDER): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(folder, target);
  root.loadSync([...UPSTREAM_FILES], { keepCase: false });
  root.resolveAll();
  return root;
}
