import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Reply } from './http.js';

interface Responses {
  [status: string]: { content?: { 'application/json'?: { schema: object } } };
}
interface Document {
  paths: Record<string, Record<string, { responses: Responses }>>;
  'x-unmatched': Responses;
}

export class ContractViolation extends Error {
  name = 'ContractViolation';
}

/**
 * Checks answers against a service's own OpenAPI document: the operation (or, for a request no
 * operation takes, the document's `x-unmatched` answers) documents the status, and the
 * body is valid under the documented schema, formats included. Throws a ContractViolation.
 */
export function contractChecker(
  document: Document,
): (method: string, path: string, reply: Reply) => void {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'contract');
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: patternOf(template),
  }));

  return (method, target, reply) => {
    const path = target.split('?')[0]!;
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const template = templates.find(({ pattern }) => pattern.test(path))?.template;
    const operation = template === undefined ? undefined : document.paths[template]![verb];
    const [where, responses] = operation
      ? [`${method} ${template}`, operation.responses]
      : [`unmatched ${method} ${path}`, document['x-unmatched']];
    const documented = responses[String(reply.status)];
    if (!documented)
      throw new ContractViolation(
        `${where} answered ${reply.status}, which the ` +
          `document does not list (${reply.text.slice(0, 200)})`,
      );
    const schema = documented.content?.['application/json']?.schema;
    if (method.toLowerCase() === 'head') return;
    if (!schema) {
      if (reply.body.length > 0)
        throw new ContractViolation(
          `${where} ${reply.status} has a body, the ` +
            `document says none: ${reply.text.slice(0, 200)}`,
        );
      return;
    }
    if (!/^application\/json\b/.test(String(reply.headers['content-type']))) {
      throw new ContractViolation(
        `${where} ${reply.status} is ${reply.headers['content-type']}, ` +
          `the document says application/json`,
      );
    }
    const answer = [String(reply.status), 'content', 'application/json', 'schema'];
    const pointer = operation
      ? ['paths', template!, verb, 'responses', ...answer]
      : ['x-unmatched', ...answer];
    const escaped = pointer.map((token) => token.replaceAll('~', '~0').replaceAll('/', '~1'));
    const validate = ajv.getSchema(`contract#/${escaped.map(encodeURIComponent).join('/')}`)!;
    if (!validate(reply.json)) {
      throw new ContractViolation(
        `${where} ${reply.status}: ${ajv.errorsText(validate.errors)} ` +
          `in ${reply.text.slice(0, 300)}`,
      );
    }
  };
}

/** `/notes/{id}` → a pattern for `/notes/<one segment>`. */
function patternOf(template: string): RegExp {
  const source = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${source}$`);
}
