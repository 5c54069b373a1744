/**
 * The cycle's reason to cut every provider call in flight (shutdown grace
 * over, lease lost). Each call subscribes for its duration: a Set, where
 * listeners on one AbortSignal would cost each call a walk over the hundreds
 * already there (EventTarget checks every add for a duplicate).
 */
export class CycleInterrupt {
  private readonly listeners = new Set<() => void>();
  private fired = false;
  private why: unknown;

  get aborted(): boolean {
    return this.fired;
  }

  get reason(): unknown {
    return this.why;
  }

  /** The first reason is kept; every subscriber is told once. */
  abort(reason: unknown): void {
    if (this.fired) return;
    this.fired = true;
    this.why = reason;
    for (const listener of [...this.listeners]) listener();
    this.listeners.clear();
  }

  /** Told once when the interrupt fires; the function returned unsubscribes. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
