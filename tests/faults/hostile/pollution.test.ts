import { describe, expect, test } from 'vitest';
import { send, type Reply } from '../../../harness/http.js';
import { expectChecks } from '../../support/checks.js';
import { advanceClock } from '../../support/clock.js';
import { polluted, problemWith } from './answers.js';
import type { Service } from './requests.js';
import { useHostileTargets } from './targets.js';

// JSON keys that would reach an object's prototype, sent to every endpoint that reads a body.

describe('prototype keys', () => {
  const started = useHostileTargets();

  test(
    '__proto__ and constructor keys change nothing: ' +
      'no pollution, no extra fields, no role change',
    async () => {
      const payloads = [
        '{"__proto__":{"polluted":"yes","role":"admin"},"title":"p","body":"b",' +
          '"content":"c","email":"user@example.com","password":"user-password"}',
        '{"constructor":{"prototype":{"polluted":"yes","role":"admin"}},"title":"p",' +
          '"body":"b","content":"c","email":"user@example.com","password":"user-password"}',
        '{"title":"p","body":"b","content":"c","email":"user@example.com",' +
          '"password":"user-password","__proto__":null}',
      ];
      const noteKeys = {
        notes8080: ['body', 'created_at', 'id', 'title'],
        notes8000: ['content', 'created_at', 'id', 'title', 'updated_at'],
      };
      // Sent as written: JSON.stringify cannot write a "__proto__" key.
      const json = { 'content-type': 'application/json' };
      const seen: string[] = [];
      /**
       * Either the request is served as if the key were absent, or it is refused saying why:
       * the JSON itself is valid.
       */
      const wrongAnswers: string[] = [];
      const refusal = (service: Service, label: string, response: Reply) => {
        const text = response.text;
        seen.push(`${label} → ${response.status} ${text.slice(0, 120)}`);
        const claimsMalformed = /json_invalid|Expecting value|not valid JSON/i.test(text);
        if (
          response.status < 400 ||
          response.status >= 500 ||
          claimsMalformed ||
          problemWith(
            service,
            { method: 'POST', path: '/', headers: {}, withValidSession: false },
            response,
          )
        ) {
          wrongAnswers.push(`${label} → ${response.status} ${text.slice(0, 160)}`);
        }
      };
      for (const payload of payloads) {
        const label = payload.includes('"constructor"')
          ? 'constructor.prototype'
          : payload.includes('"__proto__":null')
            ? '__proto__: null'
            : '__proto__';
        for (const service of ['notes8080', 'notes8000'] as const) {
          const created = await started(service).request('POST', '/notes', {
            headers: json,
            body: payload,
          });
          if (created.status !== 201) {
            refusal(service, `${service} create with ${label}`, created);
            continue;
          }
          const note = created.json as Record<string, unknown>;
          const updated = await started(service).request('PUT', `/notes/${note.id}`, {
            headers: json,
            body: payload,
          });
          seen.push(`${service} create with ${label} → 201, update → ${updated.status}`);
          expect(Object.keys(note).sort()).toEqual(noteKeys[service]);
          expect(updated.status).toBe(200);
          expect(Object.keys(updated.json as object).sort()).toEqual(noteKeys[service]);
        }
        advanceClock(16 * 60);
        const login = await started('auth').request('POST', '/api/login', {
          headers: json,
          body: payload,
        });
        if (login.status !== 200) {
          refusal('auth', `login with ${label}`, login);
          continue;
        }
        const token = /token=([^;]+)/.exec(String(login.headers['set-cookie']))![1];
        const me = await started('auth').request('GET', '/api/me', {
          headers: { cookie: `token=${token}` },
        });
        seen.push(`login with ${label} → 200, /api/me → ${me.text}`);
        expect(me.json).toEqual({ user: { id: '1', email: 'user@example.com', role: 'user' } });
      }
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
        const me = await started('auth').request('GET', '/api/me', {
          headers: { cookie: `token=${name}` },
        });
        expect({ name, status: me.status, body: me.json }).toEqual({
          name,
          status: 401,
          body: { error: 'invalid session' },
        });
        const dashboard = await send(started('auth').url, {
          method: 'GET',
          path: '/dashboard',
          headers: { cookie: `token=${name}` },
        });
        expect({ name, status: dashboard.status, location: dashboard.headers.location }).toEqual({
          name,
          status: 302,
          location: '/login',
        });
      }
      const checks = {
        'Object.prototype unchanged, ({}).polluted undefined': !polluted(),
        'served as if the key were absent, or refused saying why (not "malformed JSON")':
          wrongAnswers.length === 0,
      };
      if (wrongAnswers.length)
        console.error(`answers to __proto__/constructor keys:\n${wrongAnswers.join('\n')}`);
      expectChecks(checks);
    },
    60_000,
  );
});
