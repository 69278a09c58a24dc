import { vi } from 'vitest';

/**
 * The test process's clock (`Date`), which the login service reads for its sessions in memory,
 * its login limits, device cookies and audit times: held at `ms` until moved again. Timers keep
 * real time. `useAuthInstances` gives the real clock back after each test.
 */
export function setClock(ms: number): void {
  if (vi.isFakeTimers()) vi.setSystemTime(ms);
  else vi.useFakeTimers({ toFake: ['Date'], now: ms });
}

/** Moves the clock `seconds` forward. */
export function advanceClock(seconds: number): void {
  setClock(Date.now() + seconds * 1000);
}
