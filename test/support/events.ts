import { randomUUID } from 'node:crypto';

export type WireEvent = Record<string, unknown>;

export function metric(app: string, overrides: WireEvent = {}): WireEvent {
  return {
    id: randomUUID(),
    type: 'metric',
    name: 'render.frame_drop',
    ts: Date.now(),
    source: { app, version: '1.4.2' },
    value: 3,
    attributes: { route: '/checkout' },
    ...overrides,
  };
}

export function errorEvent(app: string, overrides: WireEvent = {}): WireEvent {
  return {
    id: randomUUID(),
    type: 'error',
    name: 'checkout.failed',
    ts: Date.now(),
    source: { app },
    error: { message: 'card declined', kind: 'PaymentError', stack: 'at pay()' },
    ...overrides,
  };
}

export function lifecycle(app: string, overrides: WireEvent = {}): WireEvent {
  return {
    id: randomUUID(),
    type: 'lifecycle',
    name: 'app.start',
    ts: Date.now(),
    source: { app },
    ...overrides,
  };
}

export function log(app: string, overrides: WireEvent = {}): WireEvent {
  return {
    id: randomUUID(),
    type: 'log',
    name: 'cart.updated',
    ts: Date.now(),
    source: { app },
    message: 'cart has 3 items',
    ...overrides,
  };
}
