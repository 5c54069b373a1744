/** The worker's notion of "now" for due checks and backoff; injectable so tests control time. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
