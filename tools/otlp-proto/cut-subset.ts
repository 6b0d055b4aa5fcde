import protobuf from 'protobufjs';

type JsonNamespace = { nested?: Record<string, JsonNode> };
type JsonNode = JsonNamespace & Record<string, unknown>;

/** The node at `names` under `top`, made (as a plain namespace) where missing. */
function nodeAt(top: JsonNamespace, names: readonly string[]): JsonNode {
  let node = top as JsonNode;
  for (const name of names) {
    node.nested ??= {};
    node = node.nested[name] ??= {};
  }
  return node;
}

/**
 * The protobufjs JSON descriptor of `subset` (upstream message name → proto field names kept),
 * cut from `root`: each kept field as upstream declares it (number, type, rule, options), each
 * oneof reduced to its kept members, and each enum a kept field names. Throws when a field is not
 * upstream, or names a message the subset leaves out (it could not be decoded).
 */
export function cutSubset(
  root: protobuf.Root,
  subset: Readonly<Record<string, readonly string[]>>,
): JsonNamespace {
  const out: JsonNamespace = {};
  for (const [typeName, fieldNames] of Object.entries(subset)) {
    const type = root.lookupType(typeName);
    const fields: Record<string, unknown> = {};
    for (const protoName of fieldNames) {
      const field = type.fields[protobuf.util.camelCase(protoName)];
      if (!field) throw new Error(`${typeName} has no field ${protoName} upstream`);
      const resolved = field.resolve().resolvedType;
      if (resolved instanceof protobuf.Type && !(resolved.fullName.slice(1) in subset)) {
        throw new Error(`${typeName}.${protoName} is a ${resolved.fullName.slice(1)}, not in the subset`);
      }
      if (resolved instanceof protobuf.Enum) {
        Object.assign(nodeAt(out, resolved.fullName.slice(1).split('.')), resolved.toJSON());
      }
      // protoName (the snake_case name) is not part of protobufjs's IField: decoding does not use it.
      const { protoName: _snake, ...declared } = field.toJSON() as protobuf.IField & { protoName?: string };
      fields[field.name] = declared;
    }
    const kept = new Set(Object.keys(fields));
    const oneofs: Record<string, { oneof: string[] }> = {};
    for (const oneof of type.oneofsArray) {
      const members = oneof.oneof.filter((name) => kept.has(name));
      if (members.length > 0) oneofs[oneof.name] = { oneof: members };
    }
    const node = nodeAt(out, typeName.split('.'));
    if (Object.keys(oneofs).length > 0) node.oneofs = oneofs;
    node.fields = fields;
  }
  return out;
}
