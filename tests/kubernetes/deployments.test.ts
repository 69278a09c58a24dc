import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SERVICE_NAMES } from '../../server/config.js';
import { STOP_DEADLINE_MS } from '../../server/lifecycle.js';
import {
  budgets,
  containerOf,
  deploymentOf,
  deployments,
  environmentOf,
  portNamed,
  REPLACED,
  resolvePort,
  ROOT,
  selects,
  services,
} from './manifests.js';

// Each Deployment coherent with the code: what its service reads from its environment, where it
// listens, what it answers, how long it takes to stop, which user the image runs as.

describe.each(SERVICE_NAMES)('the Deployment of %s', (name) => {
  const deployment = deploymentOf(name);
  const pod = deployment.spec!.template;
  const container = containerOf(name);
  /** The service's configuration in the pod, once the secrets are replaced. */
  const configured = () => loadConfig(environmentOf(container, REPLACED));

  it(
    'runs its service alone, on every interface, on the port its container ' +
      'publishes, with settings the services accept once the secrets are replaced',
    () => {
      const config = configured();
      expect(config.services).toEqual([name]);
      expect(config.listen[name]).toEqual({ host: '0.0.0.0', port: portNamed(container, 'http') });
      if (name === 'auth') expect(config.auth.sessions.store).toBe('postgres');
    },
  );

  it("does not start with the Secret's placeholders as they are", () => {
    expect(() => loadConfig(environmentOf(container))).toThrow(ConfigError);
    expect(() => loadConfig(environmentOf(container))).toThrow(
      /^DATABASE_URL=\(not shown\) is not valid/m,
    );
  });

  it(
    'gets no service links, which would set <NAME>_PORT ' +
      'to the address of the Service of the same name',
    () => {
      expect(pod.spec!.enableServiceLinks).toBe(false);
    },
  );

  it(
    'probes GET /live (started, alive) and GET /ready on the ' +
      "service's port, under a host name the service answers",
    () => {
      const probes: [IProbe | undefined, string][] = [
        [container.startupProbe, '/live'],
        [container.livenessProbe, '/live'],
        [container.readinessProbe, '/ready'],
      ];
      const config = configured();
      for (const [probe, route] of probes) {
        expect(probe?.httpGet?.path).toBe(route);
        expect(resolvePort(container, probe!.httpGet!.port)).toBe(config.listen[name].port);
        const host = probe!.httpGet!.httpHeaders?.find(
          (header) => header.name.toLowerCase() === 'host',
        )?.value;
        const { allowedHosts } = config.edge[name];
        if (allowedHosts) expect(allowedHosts).toContain(host);
      }
    },
  );

  it(
    'drains at least as long as its readiness probe ' +
      'takes to notice, and stops within its grace period',
    () => {
      const { drainMs } = configured().connections;
      const readiness = container.readinessProbe!;
      expect(drainMs).toBeGreaterThanOrEqual(
        (readiness.periodSeconds ?? 10) * (readiness.failureThreshold ?? 3) * 1000,
      );
      expect((pod.spec!.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThanOrEqual(
        drainMs + STOP_DEADLINE_MS,
      );
    },
  );

  it(
    "runs as the image's user, not root, with a read-only root " +
      'file system, no privilege escalation and no capabilities',
    () => {
      const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
      const [, user, group] =
        /^USER (\d+):(\d+)$/m.exec(dockerfile) ??
        expect.fail('the Dockerfile names no numeric USER');
      const security = { ...pod.spec!.securityContext, ...container.securityContext };
      expect(security).toMatchObject({
        runAsNonRoot: true,
        runAsUser: Number(user),
        runAsGroup: Number(group),
      });
      expect(container.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
    },
  );

  it('requests and limits CPU and memory', () => {
    for (const bound of [container.resources?.requests, container.resources?.limits]) {
      expect(Object.keys(bound ?? {}).sort()).toEqual(['cpu', 'memory']);
    }
  });

  it('is scraped by Prometheus on the metrics port, which the container publishes', () => {
    const env = environmentOf(container, REPLACED);
    expect(pod.metadata!.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': env.METRICS_PORT,
    });
    expect(portNamed(container, 'metrics')).toBe(Number(env.METRICS_PORT));
    expect(env.METRICS_HOST).toBe('0.0.0.0');
  });

  it("has a Service that selects its pods alone, on the service's port", () => {
    const { port: listening } = configured().listen[name];
    const matching = services.filter((service) =>
      selects(service.spec?.selector, pod.metadata!.labels),
    );
    expect(matching.map((service) => service.metadata.name)).toEqual([name]);
    const others = deployments.filter((other) => other !== deployment);
    expect(
      others.filter((other) =>
        selects(matching[0]!.spec!.selector, other.spec!.template.metadata!.labels),
      ),
    ).toEqual([]);
    for (const port of matching[0]!.spec!.ports!)
      expect(resolvePort(container, port.targetPort ?? port.port)).toBe(listening);
  });

  it('has a PodDisruptionBudget over its pods alone that leaves some serving', () => {
    const matching = budgets.filter((budget) =>
      selects(budget.spec!.selector!.matchLabels, pod.metadata!.labels),
    );
    expect(matching).toHaveLength(1);
    const others = deployments.filter((other) => other !== deployment);
    expect(
      others.filter((other) =>
        selects(matching[0]!.spec!.selector!.matchLabels, other.spec!.template.metadata!.labels),
      ),
    ).toEqual([]);
    expect(matching[0]!.spec!.minAvailable).toBeGreaterThanOrEqual(1);
    expect(matching[0]!.spec!.minAvailable).toBeLessThan(deployment.spec!.replicas!);
  });
});
