/** @module Webhook endpoint request schemas (docs/api.md#routes, docs/api.md#resources, docs/events-and-webhooks.md). */
import * as v from 'valibot';
import { ALL_EVENT_TYPES, EVENT_TYPES } from '../types.js';
import { PageQueryEntries } from './common.js';

/** C0 and C1 control characters and DEL: the WHATWG URL parser strips or drops some of them silently. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * An absolute `http:` or `https:` URL of at most 2048 characters, without credentials, control
 * characters or surrounding whitespace (the URL parser would silently strip them, so the URL
 * stored would not be the one given). The output is the parsed, normalised form (WHATWG
 * `URL#href`: lower-case scheme and host, punycode, default port dropped, path percent-encoded),
 * which is what is stored, checked by `WebhookTargetPolicy` and delivered to.
 */
export const UrlSchema = v.pipe(
  v.string(),
  v.maxLength(2048, 'Expected at most 2048 characters.'),
  v.check((value) => !CONTROL_CHARACTERS.test(value), 'Control characters are not allowed.'),
  v.check((value) => value.trim() === value, 'Leading or trailing whitespace is not allowed.'),
  v.check((value) => {
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
  }, 'Expected an absolute http(s) URL without credentials.'),
  // Documented before the transform: the OpenAPI document describes what callers send.
  v.metadata({
    format: 'uri',
    description:
      'An absolute http(s) URL without credentials, control characters or surrounding whitespace, stored and returned in its normalised form (WHATWG URL href). A host that is, or resolves to, a loopback, private, link-local, CGNAT, unspecified or cloud metadata address (or is localhost) is refused with 400 validation_failed at url, unless the server allows private webhook URLs.',
  }),
  v.transform((value) => new URL(value).href),
  v.maxLength(2048, 'Expected at most 2048 characters once normalised.'),
);

/**
 * A non-empty list of distinct event names of docs/events-and-webhooks.md#event-types, or `["*"]`:
 * every type, present and future.
 */
const EventsSchema = v.pipe(
  v.array(v.picklist([...EVENT_TYPES, ALL_EVENT_TYPES])),
  v.minLength(1, 'Expected at least one event.'),
  v.check((events) => new Set(events).size === events.length, 'Expected distinct events.'),
  v.check(
    (events) => !events.includes(ALL_EVENT_TYPES) || events.length === 1,
    'Expected "*" alone: it already subscribes to every event type.',
  ),
  v.metadata({
    uniqueItems: true,
    description: 'Event types to deliver, or ["*"] for every type, present and future.',
  }),
);

/**
 * A signing secret: `whsec_` + base64 of 24–64 bytes (Standard Webhooks), or any other
 * 16–512 character string used as raw UTF-8 bytes.
 */
const SecretSchema = v.pipe(
  v.string(),
  v.check((value) => {
    if (!value.startsWith('whsec_')) return value.length >= 16 && value.length <= 512;
    const encoded = value.slice('whsec_'.length);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return false;
    const bytes = Buffer.from(encoded, 'base64').length;
    return bytes >= 24 && bytes <= 64;
  }, 'Expected whsec_ followed by base64 of 24 to 64 bytes, or 16 to 512 characters.'),
  v.description(
    'Signing secret: whsec_ + base64 of 24 to 64 bytes (Standard Webhooks), or 16 to 512 characters used as raw UTF-8.',
  ),
);

/** Body of `POST /api/webhooks`. Without `secret`, Parley generates one and returns it once. */
export const WebhookCreateSchema = v.strictObject({
  url: UrlSchema,
  events: EventsSchema,
  secret: v.optional(SecretSchema),
});
export type WebhookCreateInput = v.InferInput<typeof WebhookCreateSchema>;

/** Body of `PATCH /api/webhooks/:id`. */
export const WebhookUpdateSchema = v.strictObject({
  url: v.optional(UrlSchema),
  events: v.optional(EventsSchema),
  secret: v.optional(SecretSchema),
  enabled: v.optional(v.boolean()),
});
export type WebhookUpdateInput = v.InferInput<typeof WebhookUpdateSchema>;

/** Query of `GET /api/webhooks`. */
export const WebhookListQuerySchema = v.strictObject({ ...PageQueryEntries });
export type WebhookListQuery = v.InferInput<typeof WebhookListQuerySchema>;

/** A signing secret as accepted on registration (also the body of `rotate-secret`). */
export const WebhookSecretSchema = SecretSchema;
