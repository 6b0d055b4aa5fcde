import { Uuid7Generator, uuid7Time } from '../../../sdk/src/uuid7';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const T = Date.UTC(2025, 5, 1, 12, 0, 0, 123);

describe('Uuid7Generator', () => {
  it('makes RFC 9562 version-7 ids carrying the capture millisecond', () => {
    const ids = new Uuid7Generator();
    const id = ids.next(T);
    expect(id).toMatch(V7);
    expect(uuid7Time(id)).toBe(T);
  });

  it('keeps ids made in one millisecond unique and in creation order', () => {
    const ids = new Uuid7Generator();
    const made = Array.from({ length: 5000 }, () => ids.next(T));
    expect(new Set(made).size).toBe(made.length);
    expect([...made].sort()).toEqual(made);
    for (const id of made) expect(id).toMatch(V7);
  });

  it('never goes back in order when the clock does', () => {
    const ids = new Uuid7Generator();
    const a = ids.next(T);
    const b = ids.next(T - 5000);
    expect(b > a).toBe(true);
  });

  it('moves to the next millisecond when the 12-bit counter overflows', () => {
    const ids = new Uuid7Generator((bytes) => bytes.fill(0xff)); // counter seeded at 2047
    let last = ids.next(T);
    for (let i = 0; i < 2049; i++) last = ids.next(T);
    expect(uuid7Time(last)).toBe(T + 1);
    expect(last).toMatch(V7);
  });

  it('draws from the random source in blocks, not once per id', () => {
    let calls = 0;
    const ids = new Uuid7Generator((bytes) => {
      calls++;
      bytes.fill(7);
    });
    for (let i = 0; i < 100; i++) ids.next(T + i);
    expect(calls).toBeLessThan(10);
  });
});
