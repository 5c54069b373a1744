/**
 * Lets work through in small slices, one slice per turn of the event loop
 * (`setImmediate`): timers and I/O callbacks that come due meanwhile run
 * between slices instead of after the whole burst. A claim of hundreds of
 * rows, or a wave of answers, would otherwise run as one long synchronous
 * stretch, and every timer of the process (the providers' own among them)
 * would fire that much late.
 */
export class TurnGate {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  constructor(private readonly perTurn: number) {}

  /** Resolves in a coming turn, at most `perTurn` waiters a turn, in arrival order. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.release());
  }

  private release(): void {
    this.scheduled = false;
    // The slice leaves the array: under a load that never lets it drain, a head index over one
    // array would keep every waiter ever queued.
    for (const resolve of this.waiting.splice(0, this.perTurn)) resolve();
    if (this.waiting.length > 0) this.schedule();
  }
}
