import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IService } from 'kubernetes-models/v1/Service';
import { expect } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { ServiceName } from '../../server/config.js';

// deploy/kubernetes as `kubectl apply -k` reads it, for the tests of tests/kubernetes/.

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const FOLDER = path.join(ROOT, 'deploy/kubernetes');
export const read = (file: string) => readFileSync(path.join(FOLDER, file), 'utf8');

type Generator = { name: string; envs: string[] };
type Kustomization = { resources: string[]; images: { name: string }[] } & {
  configMapGenerator: Generator[];
  secretGenerator: Generator[];
};
export const kustomization = parse(read('kustomization.yaml')) as Kustomization;
export const generators = [...kustomization.configMapGenerator, ...kustomization.secretGenerator];

type KubernetesObject = { apiVersion: string; kind: string; metadata: { name: string } };
export const objects = kustomization.resources.flatMap((file) =>
  parseAllDocuments(read(file)).map((document) => document.toJS() as KubernetesObject),
);
const ofKind = <T>(kind: string) => objects.filter((object) => object.kind === kind) as T[];
export const deployments = ofKind<IDeployment & KubernetesObject>('Deployment');
export const services = ofKind<IService & KubernetesObject>('Service');
export const budgets = ofKind<IPodDisruptionBudget & KubernetesObject>('PodDisruptionBudget');
export const ingresses = ofKind<IIngress>('Ingress');

/** The variables of each generated ConfigMap and Secret, by name, as its env files give them. */
export const generated = new Map(
  generators.map(({ name, envs }) => [
    name,
    Object.assign({}, ...envs.map((file) => parseEnv(read(file)))) as Record<string, string>,
  ]),
);

/** What the placeholders of the Secret stand for once an operator has replaced them. */
export const REPLACED = {
  DATABASE_URL: 'postgres://services:a-database-password@postgres.example.com:5432/services',
  AUTH_USER_PASSWORD: 'a-user-password-of-its-own',
  AUTH_ADMIN_PASSWORD: 'an-admin-password-of-its-own',
};

/** The environment `container` starts with, the Secret's values replaced by `secrets` if given. */
export function environmentOf(
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
export const selects = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([name, value]) => labels?.[name] === value);

export const deploymentOf = (name: ServiceName) =>
  deployments.find((deployment) => deployment.metadata.name === name)!;
export const containerOf = (name: ServiceName) =>
  deploymentOf(name).spec!.template.spec!.containers[0]!;
export const portNamed = (container: IContainer, name: string) =>
  container.ports?.find((port) => port.name === name)?.containerPort;
/** The container port a probe or a Service names, by name or by number. */
export const resolvePort = (container: IContainer, port: number | string) =>
  typeof port === 'number' ? port : portNamed(container, port);
