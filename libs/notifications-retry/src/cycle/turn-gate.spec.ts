import { TurnGate } from './turn-gate';

/** Resolves after `turns` turns of the event loop. */
async function turnsPass(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('TurnGate', () => {
  it('lets at most its slice through per turn of the event loop, in arrival order', async () => {
    const gate = new TurnGate(3);
    const through: number[] = [];
    const all = Array.from({ length: 7 }, (_, i) => gate.turn().then(() => through.push(i)));
    expect(through).toEqual([]);
    await turnsPass(1);
    expect(through).toEqual([0, 1, 2]);
    await turnsPass(1);
    expect(through).toEqual([0, 1, 2, 3, 4, 5]);
    await Promise.all(all);
    expect(through).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('lets a timer that comes due meanwhile run between slices', async () => {
    const gate = new TurnGate(2);
    const order: string[] = [];
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 1),
    );
    // Six waiters of 2 ms of work each, two a turn: the timer is due after the first slice.
    const waiters = Array.from({ length: 6 }, (_, i) =>
      gate.turn().then(() => {
        order.push(`row ${i}`);
        const busyUntil = Date.now() + 2;
        while (Date.now() < busyUntil);
      }),
    );
    await Promise.all([timer, ...waiters]);
    expect(order.indexOf('timer')).toBeLessThan(order.indexOf('row 4'));
  });
});
