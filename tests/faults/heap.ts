import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * The heap this process still holds, in MiB, after two full collections: without them the figure
 * counts garbage the collector has not reached yet, and depends on when it last ran.
 */
export function heapMiB(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed / 2 ** 20;
}
