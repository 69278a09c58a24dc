import type * as yup from 'yup';
import type { JsonSchema } from './route.js';

type Test = yup.SchemaDescription['tests'][number];

/** The JSON Schema keywords of each yup test the services use. */
const KEYWORDS: Record<string, (test: Test, type: string) => JsonSchema> = {
  max: ({ params }, type) => ({ [type === 'string' ? 'maxLength' : 'maximum']: params?.max }),
  min: ({ params }, type) => ({ [type === 'string' ? 'minLength' : 'minimum']: params?.min }),
  required: () => ({ minLength: 1 }),
  no_nul: () => ({ pattern: '^[^\\u0000]*$' }),
  integer: () => ({ type: 'integer' }),
  email: () => ({ format: 'email' }),
  // Said by the type already: JSON text is Unicode, and an integer has no length limit here.
  well_formed: () => ({}),
  int_parsing_size: () => ({}),
};

/** `note_id` → `Note Id`, as Pydantic titles a field. */
export const titleOf = (name: string) =>
  name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');

/** A yup object's JSON Schema, shaped as FastAPI shows a Pydantic model. */
export function yupJsonSchema(schema: yup.Schema): JsonSchema {
  const description = schema.describe() as yup.SchemaObjectDescription;
  if (description.type !== 'object')
    throw new Error(`No JSON Schema for a ${description.type} body`);
  const fields = Object.entries(description.fields) as [string, yup.SchemaDescription][];
  return {
    type: 'object',
    ...(description.label && { title: description.label }),
    properties: Object.fromEntries(
      fields.map(([name, field]) => {
        const value = valueJsonSchema(name, field);
        const property: JsonSchema = field.nullable ? { anyOf: [value, { type: 'null' }] } : value;
        property.title = titleOf(name);
        if (field.meta?.description !== undefined) property.description = field.meta.description;
        return [name, property];
      }),
    ),
    required: fields.filter(([, field]) => !field.optional).map(([name]) => name),
  };
}

export function parametersOf(params: yup.AnyObjectSchema, location: 'path' | 'query') {
  const { fields } = params.describe() as yup.SchemaObjectDescription;
  return Object.entries(fields as Record<string, yup.SchemaDescription>).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || !field.optional,
    schema: { ...valueJsonSchema(name, field), title: titleOf(name) },
  }));
}

function valueJsonSchema(name: string, { type, tests }: yup.SchemaDescription): JsonSchema {
  if (type !== 'string' && type !== 'number')
    throw new Error(`No JSON Schema for the ${type} field ${name}`);
  const schema: JsonSchema = { type };
  for (const test of tests) {
    const keywords = KEYWORDS[test.name ?? ''];
    if (!keywords) throw new Error(`No JSON Schema for the ${test.name} test of ${name}`);
    Object.assign(schema, keywords(test, type));
  }
  return schema;
}

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Schemas with a title, each stored once and referenced by `$ref`, as FastAPI lists its models. */
export class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  use(schema: JsonSchema): JsonSchema {
    const inner = this.#within(schema);
    const title = inner.title;
    if (typeof title !== 'string' || inner.type !== 'object') return inner;
    const known = this.schemas[title];
    if (known && JSON.stringify(known) !== JSON.stringify(inner))
      throw new Error(`Two different schemas are titled ${title}`);
    this.schemas[title] = inner;
    return { $ref: `#/components/schemas/${title}` };
  }

  #within(schema: JsonSchema): JsonSchema {
    const copy: JsonSchema = { ...schema };
    if (isSchema(copy.items)) copy.items = this.use(copy.items);
    if (Array.isArray(copy.anyOf))
      copy.anyOf = copy.anyOf.map((member: JsonSchema) => this.use(member));
    if (isSchema(copy.properties)) {
      const properties = Object.entries(copy.properties) as [string, JsonSchema][];
      copy.properties = Object.fromEntries(
        properties.map(([name, property]) => [name, this.#within(property)]),
      );
    }
    return copy;
  }
}
