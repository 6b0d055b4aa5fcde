import protobuf from 'protobufjs';
import { OTLP_DESCRIPTOR } from '../../../src/otlp/proto/otlp-descriptor';
import { otlpTypes } from '../../../src/otlp/proto/otlp-types';
import { receiverDescriptor } from '../../../tools/otlp-proto/receiver-descriptor';
import { upstreamRoot } from '../../../tools/otlp-proto/upstream-root';

/** Every message reachable from the receiver's request and response types. */
function reachable(roots: readonly protobuf.Type[]): protobuf.Type[] {
  const seen = new Set<protobuf.Type>();
  const visit = (t: protobuf.Type): void => {
    if (seen.has(t)) return;
    seen.add(t);
    for (const f of t.fieldsArray) if (f.resolvedType instanceof protobuf.Type) visit(f.resolvedType);
  };
  roots.forEach(visit);
  return [...seen];
}

/** A field as the wire sees it: number, type (by its simple name) and whether it repeats. */
function wireShape(f: protobuf.Field): string {
  const type = f.resolvedType ? f.resolvedType.name : f.type;
  return `${f.id} ${f.repeated ? 'repeated ' : ''}${type}`;
}

/**
 * The receiver's OTLP messages are cut from the vendored opentelemetry-proto files: each field it
 * decodes has the upstream number and type, so a subset cannot disagree with the specification.
 */
describe('the OTLP protobuf subset', () => {
  const upstream = upstreamRoot();
  const t = otlpTypes();
  const otlpMessages = reachable([
    t.logsRequest,
    t.metricsRequest,
    t.tracesRequest,
    t.logsResponse,
    t.metricsResponse,
    t.tracesResponse,
  ]);

  /** The upstream message of the same simple name (nested names included, e.g. `Span.Event`). */
  const upstreamTypes = new Map<string, protobuf.Type>();
  const collect = (ns: protobuf.NamespaceBase, prefix: string): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type) {
        upstreamTypes.set(`${prefix}${child.name}`, child);
        collect(child, `${prefix}${child.name}.`);
      } else if (child instanceof protobuf.Namespace) collect(child, '');
    }
  };
  collect(upstream, '');

  const simpleName = (type: protobuf.Type): string =>
    type.parent instanceof protobuf.Type ? `${type.parent.name}.${type.name}` : type.name;

  it.each(otlpMessages.map((m) => [simpleName(m), m] as const))('%s matches upstream', (name, message) => {
    const theirs = upstreamTypes.get(name);
    expect(theirs).toBeDefined();
    const ours = Object.fromEntries(message.fieldsArray.map((f) => [f.name, wireShape(f)]));
    const same = Object.fromEntries(
      message.fieldsArray.map((f) => {
        const field = theirs?.fields[f.name];
        return [f.name, field ? wireShape(field) : 'not upstream'];
      }),
    );
    expect(ours).toEqual(same);
  });

  it('is the descriptor the vendored files and the subset make (regenerated, not edited)', () => {
    const fix = 'run `npm run build && node dist/tools/otlp-proto.js`';
    expect({ descriptor: OTLP_DESCRIPTOR, fix }).toEqual({ descriptor: receiverDescriptor(), fix });
  });
});
