import { TurnOrder } from '../../../src/intake/turn-order';
import { busy } from '../../support/busy';

describe('TurnOrder', () => {
  it('hands out turns first come first served, several per loop turn while they are cheap', async () => {
    // A budget no preemption of this process on a busy box uses up.
    const q = new TurnOrder({ budgetMs: 50 });
    const order: string[] = [];
    const work = async (name: string) => {
      await q.wait();
      order.push(name);
    };
    const all = Promise.all(['a', 'b', 'c'].map(work));
    setImmediate(() => order.push('other callback'));
    await all;
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a', 'b', 'c', 'other callback']);
    expect(q.length).toBe(0);
  });

  it('lets the loop run other callbacks once a turn has used up the budget', async () => {
    const q = new TurnOrder();
    const order: string[] = [];
    const work = async (name: string) => {
      await q.wait();
      order.push(name);
      busy(10);
    };
    const all = Promise.all([work('a'), work('b')]);
    setImmediate(() => order.push('other callback'));
    await all;
    expect(order).toEqual(['a', 'other callback', 'b']);
  });

  it('reports how long the oldest request has waited', async () => {
    const q = new TurnOrder();
    expect(q.oldestWaitMs()).toBe(0);
    const first = q.wait().then(() => busy(30));
    const second = q.wait();
    expect(q.length).toBe(2);
    await first;
    expect(q.oldestWaitMs()).toBeGreaterThanOrEqual(25);
    await second;
    expect(q.oldestWaitMs()).toBe(0);
  });
});

describe('TurnOrder held', () => {
  it('hands out no turn while held, until the hold ends or a turn has waited its longest', async () => {
    let held = true;
    const q = new TurnOrder({ holdWhile: () => held, maxHoldMs: 60_000 });
    let got = false;
    const turn = q.wait().then(() => {
      got = true;
    });
    const start = Date.now();
    while (Date.now() - start < 50) await new Promise((r) => setTimeout(r, 5));
    expect(got).toBe(false);
    held = false;
    await turn;
    expect(got).toBe(true);

    const always = new TurnOrder({ holdWhile: () => true, maxHoldMs: 20 });
    await always.wait();
    expect(always.length).toBe(0);
  });
});
