import type { Clock } from '@fleet/core';

/** A clock that stands still until a test moves it (forward, or back to simulate a step). */
export class FixedClock implements Clock {
  private wall: number;
  private monotonic = 0;

  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.wall = new Date(start).getTime();
  }

  /** The wall-clock time the test set. */
  now(): Date {
    return new Date(this.wall);
  }

  /** Milliseconds the test advanced by, from 0. */
  monotonicMs(): number {
    return this.monotonic;
  }

  /** Moves both clocks forward. */
  advance(ms: number): void {
    this.wall += ms;
    this.monotonic += ms;
  }

  /** Sets the wall clock only (a step, as NTP or an operator makes): monotonic time goes on. */
  set(to: Date | string): void {
    this.wall = new Date(to).getTime();
  }
}
