import { parseDeliveryInfo } from '../../../src/jetstream/pulled-message';

describe('parseDeliveryInfo', () => {
  it('reads the ack subject without a domain', () => {
    expect(parseDeliveryInfo('$JS.ACK.EVENTS.EVENTS_standard.3.1042.77.1764590400123456789.12')).toEqual({
      stream: 'EVENTS',
      deliveryCount: 3,
      streamSequence: 1042,
      storedAtMs: 1764590400123,
    });
  });

  it('reads the ack subject with a domain and an account hash', () => {
    expect(
      parseDeliveryInfo('$JS.ACK._.ACCHASH.EVENTS.EVENTS_error.1.9.9.1764590400123456789.0.token'),
    ).toEqual({ stream: 'EVENTS', deliveryCount: 1, streamSequence: 9, storedAtMs: 1764590400123 });
  });

  it('refuses a subject that is not an ack subject', () => {
    expect(parseDeliveryInfo('_INBOX.abc.1')).toBeNull();
    expect(parseDeliveryInfo('$JS.ACK.EVENTS.x.y.z')).toBeNull();
  });
});
