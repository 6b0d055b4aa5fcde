import { StoppableLoop, type TurnResult } from '../../../src/writer/stoppable-loop';
import { createLogger } from '../../../src/log/logger';
import { waitFor } from '../../support/http';

const logger = createLogger('silent');
const HOUR = 3_600_000;

const until = (check: () => boolean) => waitFor('the loop', check, 2000);

describe('StoppableLoop', () => {
  it('goes created → running → stopping → stopped, each turn finishing what it holds', async () => {
    const loop = new StoppableLoop('test loop', logger);
    let turns = 0;
    expect(loop.state).toBe('created');
    loop.start(async (): Promise<TurnResult> => {
      turns++;
      if (loop.stopping) return 'done';
      await loop.pause(HOUR);
      return 'again';
    });
    expect(loop.state).toBe('running');
    await until(() => loop.pausing);
    const stopped = loop.stop();
    expect(loop.state).toBe('stopping');
    await stopped;
    expect(loop.state).toBe('stopped');
    expect(turns).toBe(2);
  });

  it('runs the given number of copies, and start is idempotent', async () => {
    const loop = new StoppableLoop('test loop', logger);
    let active = 0;
    const turn = async (): Promise<TurnResult> => {
      active++;
      await loop.pause(null);
      active--;
      return loop.stopping ? 'done' : 'again';
    };
    loop.start(turn, 3);
    loop.start(turn, 3);
    await until(() => active === 3);
    await loop.stop();
    expect(active).toBe(0);
  });

  it('ends a pause on wake and gives an open pause a deadline with wakeIn', async () => {
    const loop = new StoppableLoop('test loop', logger);
    let woken = 0;
    loop.start(async () => {
      if (loop.stopping) return 'done';
      await loop.pause(null);
      woken++;
      return 'again';
    });
    await until(() => loop.idle);
    loop.wake();
    await until(() => woken === 1 && loop.idle);
    loop.wakeIn(5);
    expect(loop.idle).toBe(false);
    await until(() => woken === 2);
    await loop.stop();
  });

  it('keeps a backoff through stop and ends it on abort', async () => {
    const loop = new StoppableLoop('test loop', logger);
    let backedOff = false;
    loop.start(async () => {
      await loop.backoff(HOUR);
      backedOff = true;
      return 'done';
    });
    await until(() => loop.state === 'running');
    const stopped = loop.stop();
    // Every callback stop() set off has run by the next turn of the event loop.
    await new Promise((r) => setImmediate(r));
    expect(loop.state).toBe('stopping');
    expect(backedOff).toBe(false);
    loop.abort();
    expect(loop.state).toBe('aborting');
    await stopped;
    expect(backedOff).toBe(true);
    expect(loop.state).toBe('stopped');
  });

  it('still says aborted once the loop has stopped: work that outlives it (a write in flight) gives up', async () => {
    const loop = new StoppableLoop('test loop', logger);
    loop.start(async () => {
      await loop.pause(HOUR);
      return 'again';
    });
    await until(() => loop.pausing);
    void loop.stop();
    loop.abort();
    await loop.stop();
    expect(loop.state).toBe('stopped');
    expect(loop.aborted).toBe(true);
    const started = Date.now();
    await loop.backoff(HOUR);
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('starts no turn after abort and lets no wait begin', async () => {
    const loop = new StoppableLoop('test loop', logger);
    let turns = 0;
    loop.start(async () => {
      turns++;
      await loop.pause(HOUR);
      return 'again';
    });
    await until(() => loop.pausing);
    loop.abort();
    const started = Date.now();
    await loop.pause(HOUR);
    await loop.backoff(HOUR);
    expect(Date.now() - started).toBeLessThan(100);
    await loop.stop();
    expect(turns).toBe(1);
  });

  it('rejects stop with the error of a turn that threw', async () => {
    const loop = new StoppableLoop('test loop', logger);
    loop.start(() => Promise.reject(new Error('boom')));
    await expect(loop.stop()).rejects.toThrow('boom');
    expect(loop.state).toBe('stopped');
  });
});
