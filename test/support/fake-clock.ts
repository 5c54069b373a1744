import { Clock } from '@pin/notifications-retry';

/** A clock the test moves by hand. */
export class FakeClock extends Clock {
  constructor(private current: Date = new Date('2026-11-30T12:00:00.000Z')) {
    super();
  }

  now(): Date {
    return new Date(this.current.getTime());
  }

  set(at: Date): void {
    this.current = new Date(at.getTime());
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
