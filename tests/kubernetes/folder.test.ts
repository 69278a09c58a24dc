import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES, loadConfig, SERVICE_NAMES } from '../../server/config.js';
import type { ServiceName } from '../../server/config.js';
import * as manifests from './manifests.js';

const { containerOf, deployments, environmentOf, generated, generators } = manifests;
const { ingresses, kustomization, objects, REPLACED, ROOT, services } = manifests;

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
