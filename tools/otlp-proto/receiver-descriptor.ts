import type protobuf from 'protobufjs';
import { OTLP_SUBSET } from '../../src/otlp/proto/subset';
import { cutSubset } from './cut-subset';
import { upstreamRoot } from './upstream-root';

/**
 * google.rpc.Status as the receiver answers a refused request: fields 1 and 2 of googleapis's
 * `google.rpc.Status` message (`details` is never sent). Not part of opentelemetry-proto.
 */
const RPC_STATUS = {
  fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } },
};

/** The receiver's descriptor: the OTLP subset cut from the vendored upstream files, and RpcStatus. */
export function receiverDescriptor(folder?: string): protobuf.INamespace {
  const cut = cutSubset(upstreamRoot(folder), OTLP_SUBSET);
  return { nested: { ...cut.nested, google: { nested: { rpc: { nested: { Status: RPC_STATUS } } } } } };
}
