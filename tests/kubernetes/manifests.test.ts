import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, ENVIRONMENT_VARIABLES, loadConfig } from '../../server/config.js';
import { SERVICE_NAMES } from '../../server/config.js';
import type { ServiceName } from '../../server/config.js';
import { STOP_DEADLINE_MS } from '../../server/lifecycle.js';
import * as manifests from './manifests.js';

const { budgets, containerOf, deploymentOf, deployments, environmentOf, generated } = manifests;
const { generators, ingresses, kustomization, objects, portNamed, REPLACED } = manifests;
const { resolvePort, ROOT, selects, services } = manifests;

// deploy/kubernetes as a whole: every object valid under the Kubernetes schemas
// (kubernetes-models' validators: types, required fields, formats), only variables the code
// reads, and the Ingress and the image coherent with the services. No cluster is involved.

describe('deploy/kubernetes', () => {
  it('the kustomization lists every file of the folder, and each file it lists is there', () => {
    const listed = [...kustomization.resources, ...generators.flatMap(({ envs }) => envs)];
    const present = readdirSync(manifests.FOLDER).filter((file) => file !== 'kustomization.yaml');
    expect([...listed].sort()).toEqual(present.sort());
  });

  it('every object is valid under the Kubernetes schemas', async () => {
    expect(objects.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const object of objects) {
      const models = (await import(
        `kubernetes-models/${object.apiVersion}/${object.kind}`
      )) as Record<string, new (data: unknown) => { validate(): void }>;
      try {
        new models[object.kind]!(object).validate();
      } catch (error) {
        problems.push(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('has a Deployment of two replicas of one container of its image per service', () => {
    const names = deployments.map((deployment) => deployment.metadata.name);
    expect(names.sort()).toEqual([...SERVICE_NAMES].sort());
    for (const deployment of deployments) {
      expect(deployment.spec!.replicas).toBe(2);
      const { containers } = deployment.spec!.template.spec!;
      expect(containers).toHaveLength(1);
      // The image the kustomization names.
      expect(kustomization.images.map(({ name }) => name)).toContain(containers[0]!.image);
    }
  });

  it("sets only variables the services read (or OpenTelemetry's own)", () => {
    const named = [
      ...[...generated.values()].flatMap((variables) => Object.keys(variables)),
      ...deployments.flatMap((deployment) =>
        deployment.spec!.template.spec!.containers.flatMap((container) =>
          (container.env ?? []).map(({ name }) => name),
        ),
      ),
    ];
    expect(
      named.filter((name) => !ENVIRONMENT_VARIABLES.includes(name) && !name.startsWith('OTEL_')),
    ).toEqual([]);
  });
});

describe('the Ingress', () => {
  const rules = ingresses.flatMap((ingress) =>
    ingress.spec!.rules!.map((rule) => ({
      rule,
      tls: ingress.spec!.tls?.flatMap(({ hosts }) => hosts ?? []) ?? [],
    })),
  );

  it('routes a host name, over TLS, to each service', () => {
    const backends = rules.flatMap(({ rule }) =>
      rule.http!.paths.map((route) => route.backend.service!.name),
    );
    expect(backends.sort()).toEqual([...SERVICE_NAMES].sort());
    for (const { rule, tls } of rules) expect(tls).toContain(rule.host);
  });

  it('sends each host name to a port of the Service whose service answers that name', () => {
    for (const { rule } of rules) {
      for (const { backend } of rule.http!.paths) {
        const name = backend.service!.name as ServiceName;
        const service = services.find((candidate) => candidate.metadata.name === name);
        expect(service?.spec!.ports!.map(({ port }) => port)).toContain(
          backend.service!.port!.number,
        );
        const { allowedHosts } = loadConfig(environmentOf(containerOf(name), REPLACED)).edge[name];
        if (allowedHosts) expect(allowedHosts).toContain(rule.host);
      }
    }
  });

  it('the image runs the server as npm start does: plain Node on the compiled entry point', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    const command = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    expect(['exec', ...command].join(' ')).toBe(scripts.start);
    expect(dockerfile).not.toMatch(/MALLOC_|--expose-gc|--max-semi-space|--heap-/);
  });
});

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
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
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
