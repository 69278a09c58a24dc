import os from 'node:os';
import type { Machine } from './results.js';

export function describeMachine(postgres: string): Machine {
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres,
    date: new Date().toISOString(),
    loadAverage: { before: os.loadavg()[0]! },
  };
}
