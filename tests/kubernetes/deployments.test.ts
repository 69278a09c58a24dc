import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SERVICE_NAMES } from '../../server/config.js';
import { STOP_DEADLINE_MS } from '../../server/lifecycle.js';
import * as manifests from './manifests.js';

const { budgets, containerOf, deploymentOf, deployments, environmentOf, portNamed } = manifests;
const { REPLACED, resolvePort, selects, services } = manifests;

// Each Deployment coherent with the code: what its service reads from its environment, where it
// listens, what it answers, how long it takes to stop, which user the image runs as.

describe.each(SERVICE_NAMES)('the Deployment of %s', (name) => {
  const deployment = deploymentOf(name);
  const pod = deployment.spec!.template;
  const container = containerOf(name);
  /** The service's configuration in the pod, once the secrets are replaced. */
  const configured = () => loadConfig(environmentOf(container, REPLACED));
  /** The other Deployments whose pods a selector also takes. */
  const othersSelected = (selector?: Record<string, string>) =>
    deployments.filter(
      (other) => other !== deployment && selects(selector, other.spec!.template.metadata!.labels),
    );

  it('runs its service alone, on every interface, on the port its container publishes', () => {
    // With settings the services accept once the secrets are replaced.
    const config = configured();
    expect(config.services).toEqual([name]);
    expect(config.listen[name]).toEqual({ host: '0.0.0.0', port: portNamed(container, 'http') });
    if (name === 'auth') expect(config.auth.sessions.store).toBe('postgres');
    // No service links, which would set <NAME>_PORT to the address of the Service of that name.
    expect(pod.spec!.enableServiceLinks).toBe(false);
  });

  it("does not start with the Secret's placeholders as they are", () => {
    expect(() => loadConfig(environmentOf(container))).toThrow(ConfigError);
    expect(() => loadConfig(environmentOf(container))).toThrow(
      /^DATABASE_URL=\(not shown\) is not valid/m,
    );
  });

  it("probes GET /live and /ready on the service's port, by a host it answers", () => {
    const config = configured();
    const { allowedHosts } = config.edge[name];
    for (const [probe, route] of [
      [container.startupProbe, '/live'],
      [container.livenessProbe, '/live'],
      [container.readinessProbe, '/ready'],
    ] as const) {
      expect(probe?.httpGet?.path).toBe(route);
      expect(resolvePort(container, probe!.httpGet!.port)).toBe(config.listen[name].port);
      const headers = probe!.httpGet!.httpHeaders ?? [];
      const host = headers.find((header) => header.name.toLowerCase() === 'host')?.value;
      if (allowedHosts) expect(allowedHosts).toContain(host);
    }
  });

  it('drains as long as readiness takes to notice, and stops within its grace', () => {
    const { drainMs } = configured().connections;
    const { periodSeconds = 10, failureThreshold = 3 } = container.readinessProbe!;
    expect(drainMs).toBeGreaterThanOrEqual(periodSeconds * failureThreshold * 1000);
    expect((pod.spec!.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThanOrEqual(
      drainMs + STOP_DEADLINE_MS,
    );
  });

  it("runs as the image's user, not root, read-only, without privileges", () => {
    const dockerfile = readFileSync(path.join(manifests.ROOT, 'Dockerfile'), 'utf8');
    const [, user, group] =
      /^USER (\d+):(\d+)$/m.exec(dockerfile) ?? expect.fail('the Dockerfile names no numeric USER');
    const security = { ...pod.spec!.securityContext, ...container.securityContext };
    const [runAsUser, runAsGroup] = [Number(user), Number(group)];
    expect(security).toMatchObject({ runAsNonRoot: true, runAsUser, runAsGroup });
    // A read-only root file system, no privilege escalation and no capabilities.
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    // It requests and limits CPU and memory.
    for (const bound of [container.resources?.requests, container.resources?.limits])
      expect(Object.keys(bound ?? {}).sort()).toEqual(['cpu', 'memory']);
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

  it("has a Service over its pods alone, on the service's port", () => {
    const { port: listening } = configured().listen[name];
    const labels = pod.metadata!.labels;
    const matching = services.filter((service) => selects(service.spec?.selector, labels));
    expect(matching.map((service) => service.metadata.name)).toEqual([name]);
    expect(othersSelected(matching[0]!.spec!.selector)).toEqual([]);
    for (const port of matching[0]!.spec!.ports!)
      expect(resolvePort(container, port.targetPort ?? port.port)).toBe(listening);
  });

  it('has a PodDisruptionBudget over its pods alone that leaves some serving', () => {
    const labels = pod.metadata!.labels;
    const matching = budgets.filter((budget) =>
      selects(budget.spec!.selector!.matchLabels, labels),
    );
    expect(matching).toHaveLength(1);
    const { selector, minAvailable } = matching[0]!.spec!;
    expect(othersSelected(selector!.matchLabels)).toEqual([]);
    expect(minAvailable).toBeGreaterThanOrEqual(1);
    expect(minAvailable).toBeLessThan(deployment.spec!.replicas!);
  });
});
