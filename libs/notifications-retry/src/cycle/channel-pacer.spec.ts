import { ChannelPacer } from './channel-pacer';

describe('ChannelPacer', () => {
  it('never holds back a channel without a rate limit', async () => {
    const pacer = new ChannelPacer();
    pacer.dispatched('email', null, 0);
    expect(pacer.waitMs('email', null, 0)).toBe(0);
    await expect(pacer.awaitCallSlot('email', null)).resolves.toBeUndefined();
  });

  it('stops holding back a channel once its rate limit is lifted', () => {
    const pacer = new ChannelPacer();
    pacer.dispatched('sms', 4, 1_000);
    expect(pacer.waitMs('sms', 4, 1_000)).toBe(251);
    // The operator cleared rate_limit_per_sec: the slot planned under the old limit no longer counts.
    expect(pacer.waitMs('sms', null, 1_000)).toBe(0);
  });

  it('spaces dispatches 1000 / rate ms apart (plus a millisecond), per channel', () => {
    const pacer = new ChannelPacer();
    pacer.dispatched('sms', 4, 1_000);
    expect(pacer.waitMs('sms', 4, 1_000)).toBe(251);
    expect(pacer.waitMs('sms', 4, 1_200)).toBe(51);
    expect(pacer.waitMs('sms', 4, 1_251)).toBe(0);
    expect(pacer.waitMs('push', 4, 1_000)).toBe(0);
    // A burst of dispatches queues up behind each other, not all at the next slot.
    pacer.dispatched('sms', 4, 1_000);
    expect(pacer.waitMs('sms', 4, 1_000)).toBe(502);
  });

  it('lets calls through one spacing apart, measured from when the previous one started', async () => {
    const pacer = new ChannelPacer();
    const starts: number[] = [];
    await Promise.all(
      [1, 2, 3].map(async () => {
        await pacer.awaitCallSlot('sms', 20);
        starts.push(performance.now());
      }),
    );
    const gaps = [starts[1] - starts[0], starts[2] - starts[1]];
    // 1000 / 20 + 1 = 51 ms; timers fire late on a loaded machine, never early.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(50);
  });

  it('lets a call through without a timer when its turn has come: the first, or one a spacing after the last', async () => {
    jest.useFakeTimers();
    try {
      const pacer = new ChannelPacer();
      const flushMicrotasks = async (): Promise<void> => {
        for (let i = 0; i < 10; i++) await Promise.resolve();
      };
      let passed = 0;
      void pacer.awaitCallSlot('sms', 4).then(() => passed++);
      await flushMicrotasks();
      expect(passed).toBe(1);
      expect(jest.getTimerCount()).toBe(0);

      // Exactly one spacing (1000 / 4 + 1 ms) later: the turn has come, not one timer tick later.
      jest.advanceTimersByTime(251);
      void pacer.awaitCallSlot('sms', 4).then(() => passed++);
      await flushMicrotasks();
      expect(passed).toBe(2);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('plans the slots of rows still to claim behind those already dispatched', () => {
    const pacer = new ChannelPacer();
    // Nothing dispatched yet: the next slot is now, the one after one spacing (1000 / 4 + 1) later.
    expect(pacer.slotAt('sms', 4, 1_000, 0)).toBe(1_000);
    expect(pacer.slotAt('sms', 4, 1_000, 2)).toBe(1_502);
    pacer.dispatched('sms', 4, 1_000);
    expect(pacer.slotAt('sms', 4, 1_000, 0)).toBe(1_251);
    expect(pacer.slotAt('sms', 4, 1_100, 1)).toBe(1_502);
    // A slot in the past is now.
    expect(pacer.slotAt('sms', 4, 5_000, 0)).toBe(5_000);
    expect(pacer.slotAt('push', 4, 5_000, 0)).toBe(5_000);
  });
});
