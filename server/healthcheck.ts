import http from 'node:http';
import { loadConfig, type ServiceName } from './config.js';
import { exitOnStartupError } from './http/errors.js';

// The image's HEALTHCHECK: each service of the process answers GET /live within 2 s, whatever its
// database (an outage must not make an orchestrator restart healthy processes); else one line each.
const config = exitOnStartupError(() => loadConfig());

function live(name: ServiceName): Promise<string | undefined> {
  const { host, port } = config.listen[name];
  const address = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  // Asked under a name the service answers, should it answer only some.
  const hostHeader =
    config.edge[name].allowedHosts?.[0] ??
    `${address.includes(':') ? `[${address}]` : address}:${port}`;
  return new Promise((resolve) => {
    const request = http.get(
      { host: address, port, path: '/live', headers: { host: hostHeader }, timeout: 2_000 },
      (response) => {
        response.resume();
        resolve(
          response.statusCode === 200
            ? undefined
            : `${name}: GET /live answered ${response.statusCode}`,
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('no answer within 2 s')));
    request.on('error', (error) => resolve(`${name}: ${error.message}`));
  });
}

const failures = (await Promise.all(config.services.map(live))).filter(Boolean);
if (failures.length > 0) process.stderr.write(`${failures.join('\n')}\n`);
process.exit(failures.length > 0 ? 1 : 0);
