import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { IService } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  ConfigError,
  ENVIRONMENT_VARIABLES,
  loadConfig,
  SERVICE_NAMES,
  type ServiceName,
} from '../server/config.js';
import { STOP_DEADLINE_MS } from '../server/lifecycle.js';

// deploy/kubernetes as `kubectl apply -k` reads it: every object valid under the Kubernetes
// schemas (kubernetes-models' validators: types, required fields, formats), and coherent with the
// code: what each service reads from its environment, where it listens, what it answers, how long
// it takes to stop, which user the image runs as. No cluster is involved.

const ROOT = path.resolve(import.meta.dirname, '..');
const FOLDER = path.join(ROOT, 'deploy/kubernetes');
const read = (file: string) => readFileSync(path.join(FOLDER, file), 'utf8');

interface Generator {
  name: string;
  envs: string[];
}
interface Kustomization {
  resources: string[];
  configMapGenerator: Generator[];
  secretGenerator: Generator[];
  images: { name: string }[];
}
const kustomization = parse(read('kustomization.yaml')) as Kustomization;
const generators = [...kustomization.configMapGenerator, ...kustomization.secretGenerator];

interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
}
const objects = kustomization.resources.flatMap((file) =>
  parseAllDocuments(read(file)).map((document) => document.toJS() as KubernetesObject),
);
const ofKind = <T>(kind: string) => objects.filter((object) => object.kind === kind) as T[];
const deployments = ofKind<IDeployment & KubernetesObject>('Deployment');
const services = ofKind<IService & KubernetesObject>('Service');
const budgets = ofKind<IPodDisruptionBudget & KubernetesObject>('PodDisruptionBudget');
const ingresses = ofKind<IIngress>('Ingress');

/**
 * The variables of each generated ConfigMap and Secret, by its name, as its env files give them.
 */
const generated = new Map(
  generators.map(({ name, envs }) => [
    name,
    Object.assign({}, ...envs.map((file) => parseEnv(read(file)))) as Record<string, string>,
  ]),
);

/** What the placeholders of the Secret stand for once an operator has replaced them. */
const REPLACED = {
  DATABASE_URL: 'postgres://services:a-database-password@postgres.example.com:5432/services',
  AUTH_USER_PASSWORD: 'a-user-password-of-its-own',
  AUTH_ADMIN_PASSWORD: 'an-admin-password-of-its-own',
};

/**
 * The environment `container` starts with, the Secret's values replaced by `secrets` when given.
 */
function environmentOf(
  container: IContainer,
  secrets: Record<string, string> = {},
): Record<string, string> {
  const variablesOf = (name: string) =>
    generated.get(name) ?? expect.fail(`nothing generates ${name}`);
  const env: Record<string, string> = {};
  for (const { configMapRef, secretRef } of container.envFrom ?? [])
    Object.assign(env, variablesOf((configMapRef ?? secretRef)!.name!));
  for (const { name, value, valueFrom } of container.env ?? []) {
    const reference = valueFrom?.secretKeyRef ?? valueFrom?.configMapKeyRef;
    if (value !== undefined) env[name] = value;
    else if (reference)
      env[name] =
        (valueFrom?.secretKeyRef && secrets[reference.key]) ||
        variablesOf(reference.name!)[reference.key]!;
  }
  return env;
}

/** Whether every label a selector asks for is among `labels`. */
const selects = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([name, value]) => labels?.[name] === value);

const deploymentOf = (name: ServiceName) =>
  deployments.find((deployment) => deployment.metadata.name === name)!;
const containerOf = (name: ServiceName) => deploymentOf(name).spec!.template.spec!.containers[0]!;
const portNamed = (container: IContainer, name: string) =>
  container.ports?.find((port) => port.name === name)?.containerPort;
/** The container port a probe or a Service names, by name or by number. */
const resolvePort = (container: IContainer, port: number | string) =>
  typeof port === 'number' ? port : portNamed(container, port);

describe('deploy/kubernetes', () => {
  it('the kustomization lists every file of the folder, and each file it lists is there', () => {
    const listed = [...kustomization.resources, ...generators.flatMap(({ envs }) => envs)];
    const present = readdirSync(FOLDER).filter((file) => file !== 'kustomization.yaml');
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

  it(
    'has a Deployment of two replicas for each service, one ' +
      'container each, of the image the kustomization names',
    () => {
      expect(deployments.map((deployment) => deployment.metadata.name).sort()).toEqual(
        [...SERVICE_NAMES].sort(),
      );
      for (const deployment of deployments) {
        expect(deployment.spec!.replicas).toBe(2);
        const { containers } = deployment.spec!.template.spec!;
        expect(containers).toHaveLength(1);
        expect(kustomization.images.map(({ name }) => name)).toContain(containers[0]!.image);
      }
    },
  );

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
