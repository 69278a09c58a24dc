import { objectJsonSchema, titleOf, type JsonSchema } from './jsonSchema.js';
import { messages } from './messages.js';
import { NoteCreate, NoteUpdate } from './schema.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });
const response = (description: string, schema: JsonSchema) => ({ description, ...json(schema) });

const detailOnly = (title: string, example: string): JsonSchema => ({
  type: 'object',
  title,
  properties: { detail: { type: 'string', title: 'Detail', examples: [example] } },
  required: ['detail'],
});

/** Response shapes (requests are described from the yup schemas that validate them). */
const responseSchemas: Record<string, JsonSchema> = {
  Note: {
    type: 'object',
    title: 'Note',
    properties: {
      id: { type: 'integer', title: 'Id' },
      title: { type: 'string', title: 'Title' },
      content: { type: 'string', title: 'Content' },
      created_at: { type: 'string', format: 'date-time', title: 'Created At' },
      updated_at: { type: 'string', format: 'date-time', title: 'Updated At' },
    },
    required: ['id', 'title', 'content', 'created_at', 'updated_at'],
  },
  Health: {
    type: 'object',
    title: 'Health',
    properties: { status: { type: 'string', title: 'Status', examples: [messages.healthy] } },
    required: ['status'],
  },
  Message: {
    type: 'object',
    title: 'Message',
    properties: { message: { type: 'string', title: 'Message', examples: [messages.noteDeleted] } },
    required: ['message'],
  },
  NotFound: detailOnly('NotFound', messages.noteNotFound),
  HTTPError: detailOnly('HTTPError', 'database unavailable'),
  ValidationError: {
    type: 'object',
    title: 'ValidationError',
    properties: {
      loc: { type: 'array', title: 'Location', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
      msg: { type: 'string', title: 'Message' },
      type: { type: 'string', title: 'Error Type' },
      input: { title: 'Input' },
      ctx: { type: 'object', title: 'Context' },
    },
    required: ['loc', 'msg', 'type'],
  },
  HTTPValidationError: {
    type: 'object',
    title: 'HTTPValidationError',
    properties: { detail: { type: 'array', title: 'Detail', items: ref('ValidationError') } },
  },
};

const noteIdParameter = {
  name: 'note_id',
  in: 'path',
  required: true,
  schema: { type: 'integer', title: titleOf('note_id') },
};

const invalid = { '422': response('Validation Error', ref('HTTPValidationError')) };
const missing = { '404': response('Note not found', ref('NotFound')) };
const tooLarge = { '413': response('Request body too large', ref('HTTPError')) };
const storeFailure = { '500': response('The store failed', ref('HTTPError')) };

const body = (schema: string) => ({ required: true, ...json(ref(schema)) });

type Operation = { name: string } & Record<string, unknown>;

/**
 * Each operation's FastAPI-style summary and operation id, from the handler name it is given:
 * `create_note` on POST /notes is "Create Note", `create_note_notes_post`.
 */
function named(paths: Record<string, Record<string, Operation>>) {
  return Object.fromEntries(
    Object.entries(paths).map(([route, operations]) => [
      route,
      Object.fromEntries(
        Object.entries(operations).map(([method, { name, ...spec }]) => [
          method,
          { summary: titleOf(name), operationId: `${name}${route}_${method}`.replace(/\W/g, '_'), ...spec },
        ]),
      ),
    ]),
  );
}

/** The OpenAPI 3.1 description of the service, served at `/openapi.json` and shown by `/docs`. */
export function openApiDocument() {
  return {
    openapi: '3.1.0',
    info: { title: 'Notes API', version: '0.1.0' },
    paths: named({
      '/health': {
        get: { name: 'health', responses: { '200': response('The process is running', ref('Health')) } },
      },
      '/notes': {
        get: {
          name: 'list_notes',
          description: 'All notes, newest `id` first.',
          responses: { '200': response('Successful Response', { type: 'array', items: ref('Note') }), ...storeFailure },
        },
        post: {
          name: 'create_note',
          requestBody: body('NoteCreate'),
          responses: { '201': response('Successful Response', ref('Note')), ...invalid, ...tooLarge, ...storeFailure },
        },
      },
      '/notes/{note_id}': {
        get: {
          name: 'get_note',
          parameters: [noteIdParameter],
          responses: { '200': response('Successful Response', ref('Note')), ...missing, ...invalid, ...storeFailure },
        },
        put: {
          name: 'update_note',
          description: 'Partial update: a field left out or null keeps its value.',
          parameters: [noteIdParameter],
          requestBody: body('NoteUpdate'),
          responses: {
            '200': response('Successful Response', ref('Note')),
            ...missing,
            ...invalid,
            ...tooLarge,
            ...storeFailure,
          },
        },
        delete: {
          name: 'delete_note',
          parameters: [noteIdParameter],
          responses: { '200': response('Successful Response', ref('Message')), ...missing, ...invalid, ...storeFailure },
        },
      },
    }),
    components: {
      schemas: {
        NoteCreate: objectJsonSchema('NoteCreate', NoteCreate),
        NoteUpdate: objectJsonSchema('NoteUpdate', NoteUpdate),
        ...responseSchemas,
      },
    },
  };
}
