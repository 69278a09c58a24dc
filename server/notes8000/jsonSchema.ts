import type * as yup from 'yup';

export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema (OpenAPI 3.1 dialect) of a yup object schema, from its `describe()`, shaped
 * as FastAPI shows a Pydantic model: property titles, nullable fields as `anyOf [T, null]`.
 * Only what the service's schemas use is supported; anything else is a programming error.
 */
export function objectJsonSchema(title: string, schema: yup.ObjectSchema<yup.AnyObject>): JsonSchema {
  const description = schema.describe();
  const fields = Object.entries(description.fields) as [string, yup.SchemaDescription][];
  return {
    type: 'object',
    title,
    properties: Object.fromEntries(fields.map(([name, field]) => [name, fieldJsonSchema(name, field)])),
    required: fields.filter(([, field]) => !field.optional).map(([name]) => name),
  };
}

function fieldJsonSchema(name: string, field: yup.SchemaDescription): JsonSchema {
  const value = valueJsonSchema(name, field);
  const property: JsonSchema = field.nullable ? { anyOf: [value, { type: 'null' }] } : value;
  property.title = titleOf(name);
  if ('default' in field && field.default !== undefined) property.default = field.default;
  return property;
}

function valueJsonSchema(name: string, field: yup.SchemaDescription): JsonSchema {
  if (field.type !== 'string') throw new Error(`No JSON Schema for the ${field.type} field ${name}`);
  const schema: JsonSchema = { type: 'string' };
  for (const test of field.tests) {
    switch (test.name) {
      case 'max':
        schema.maxLength = test.params?.max;
        break;
      case 'no_nul':
        schema.pattern = '^[^\\u0000]*$';
        break;
      case 'well_formed':
        // A JSON Schema string is Unicode text already: nothing to add.
        break;
      default:
        throw new Error(`No JSON Schema for the ${test.name} test of ${name}`);
    }
  }
  return schema;
}

/** `note_id` → `Note Id`, as Pydantic titles a field. */
export function titleOf(name: string): string {
  return name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
