/**
 * @module Webhooks: endpoints (create, edit, enable/disable, rotate the secret — shown once — send
 * a test event, delete) and each endpoint's deliveries log (status, duration, response, next
 * attempt) with redeliver.
 */
import type { DeliveryAttempt, WebhookEndpoint } from '@parley/client';
import { useState } from 'preact/hooks';
import { lacking, problemOf, type Problem, type Session } from '../api.ts';
import type { Route } from '../app.tsx';
import { Button, Confirm, Empty, ErrorMessage, Loading, Pager, ShownOnce, Time, href, useLoad } from '../ui.tsx';

const LIMIT = 20;

export const EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'conversation.started',
  'conversation.completed',
  'conversation.deleted',
  'message.sent',
  'message.received',
  'reply.failed',
  'reply.requires_action',
] as const;
type EventType = (typeof EVENT_TYPES)[number];

/** The events an endpoint gets: `*` (every type) or a selection. */
function EventsPicker({
  value,
  onChange,
  label,
}: {
  value: WebhookEndpoint['events'];
  onChange: (events: WebhookEndpoint['events']) => void;
  label: string;
}) {
  const all = value.includes('*');
  return (
    <fieldset class="events-picker">
      <legend>{label}</legend>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => onChange(e.currentTarget.checked ? ['*'] : [])} />
        Every event type (*)
      </label>
      {!all &&
        EVENT_TYPES.map((type) => (
          <label key={type} class="check">
            <input
              type="checkbox"
              checked={value.includes(type)}
              onChange={(e) =>
                onChange(e.currentTarget.checked ? [...value, type] : value.filter((event) => event !== type))
              }
            />
            {type}
          </label>
        ))}
    </fieldset>
  );
}

function EndpointRow({
  session,
  endpoint,
  onChanged,
}: {
  session: Session;
  endpoint: WebhookEndpoint;
  onChanged: () => void;
}) {
  const { client } = session;
  const [editing, setEditing] = useState(false);
  const [url, setUrl] = useState(endpoint.url);
  const [events, setEvents] = useState(endpoint.events);
  const [testType, setTestType] = useState<EventType>('message.sent');
  const [tested, setTested] = useState<DeliveryAttempt | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [deleting, setDeleting] = useState(false);
  const why = lacking(session, 'webhooks:write');
  const act = async (work: () => Promise<void>) => {
    setProblem(null);
    try {
      await work();
    } catch (error) {
      setProblem(problemOf(error));
    }
  };
  return (
    <li class="endpoint">
      <p>
        <span class="mono break">{endpoint.url}</span>{' '}
        <span class={`badge ${endpoint.enabled ? 'active' : 'inactive'}`}>
          {endpoint.enabled ? 'enabled' : `disabled${endpoint.disabledReason ? ` (${endpoint.disabledReason})` : ''}`}
        </span>
      </p>
      <p class="muted small">
        <span class="mono">{endpoint.id}</span> · events {endpoint.events.join(', ')} · created{' '}
        <Time iso={endpoint.createdAt} />
      </p>
      <div class="row">
        <a href={`#/webhooks/${encodeURIComponent(endpoint.id)}/deliveries`}>Deliveries of {endpoint.url}</a>
        <Button why={why} onClick={() => setEditing(!editing)} aria-expanded={editing}>
          Edit
        </Button>
        <Button
          why={why}
          onClick={() =>
            act(async () => {
              await client.webhooks.update(endpoint.id, { enabled: !endpoint.enabled });
              onChanged();
            })
          }
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </Button>
        <Button
          why={why}
          onClick={() => act(async () => setSecret((await client.webhooks.rotateSecret(endpoint.id)).secret))}
        >
          Rotate secret
        </Button>
        <Button variant="danger" why={why} onClick={() => setDeleting(true)}>
          Delete
        </Button>
      </div>
      <div class="row">
        <label>
          Test event type
          <select value={testType} onChange={(e) => setTestType(e.currentTarget.value as EventType)}>
            {EVENT_TYPES.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
        <Button
          why={why}
          onClick={() => act(async () => setTested(await client.webhooks.test(endpoint.id, { eventType: testType })))}
        >
          Send test event
        </Button>
      </div>
      {tested && (
        <p role="status">
          Test sent:{' '}
          {tested.status === null ? `no answer (${tested.error ?? 'unknown error'})` : `HTTP ${tested.status}`} in{' '}
          {tested.durationMs} ms.
        </p>
      )}
      {secret && <ShownOnce label="New signing secret" value={secret} onDone={() => setSecret(null)} />}
      {editing && (
        <form
          class="form"
          onSubmit={(event) => {
            event.preventDefault();
            void act(async () => {
              await client.webhooks.update(endpoint.id, { url, events });
              setEditing(false);
              onChanged();
            });
          }}
        >
          <label>
            URL of {endpoint.id}
            <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
          <EventsPicker value={events} onChange={setEvents} label="Events it gets" />
          <Button type="submit" variant="primary">
            Save endpoint
          </Button>
        </form>
      )}
      <ErrorMessage problem={problem} />
      <Confirm
        open={deleting}
        title="Delete this webhook endpoint?"
        confirm="Delete endpoint"
        onCancel={() => setDeleting(false)}
        onConfirm={() => {
          setDeleting(false);
          void act(async () => {
            await client.webhooks.delete(endpoint.id);
            onChanged();
          });
        }}
      >
        <p>No more events are delivered to {endpoint.url}.</p>
      </Confirm>
    </li>
  );
}

export function Webhooks({ session, route }: { session: Session; route: Route }) {
  const page = Math.max(1, Number(route.query.get('page') ?? 1) || 1);
  const list = useLoad(() => session.client.webhooks.list({ page, limit: LIMIT }), [page]);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEndpoint['events']>(['*']);
  const [created, setCreated] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const why = lacking(session, 'webhooks:write');
  const readWhy = lacking(session, 'webhooks:read');
  return (
    <section>
      <h1>Webhooks</h1>
      {readWhy ? (
        <p class="empty">{readWhy}</p>
      ) : (
        <>
          {list.loading && !list.data && <Loading what="webhook endpoints" />}
          <ErrorMessage problem={list.problem ? problemOf(list.problem) : null} />
          {list.data && list.data.webhooks.length === 0 && <Empty>No webhook endpoints yet.</Empty>}
          {list.data && list.data.webhooks.length > 0 && (
            <ul class="endpoints" aria-label="Webhook endpoints">
              {list.data.webhooks.map((endpoint) => (
                <EndpointRow
                  key={`${endpoint.id}:${endpoint.updatedAt}`}
                  session={session}
                  endpoint={endpoint}
                  onChanged={list.reload}
                />
              ))}
            </ul>
          )}
          {list.data && (
            <Pager
              page={page}
              limit={LIMIT}
              total={list.data.total}
              label="Webhook pages"
              onPage={(p) => (window.location.hash = href('/webhooks', { page: p }))}
            />
          )}
        </>
      )}
      <h2>Add an endpoint</h2>
      {created && <ShownOnce label="Signing secret" value={created} onDone={() => setCreated(null)} />}
      <form
        class="form"
        onSubmit={(event) => {
          event.preventDefault();
          setProblem(null);
          session.client.webhooks.create({ url, events }).then(
            (endpoint) => {
              if (endpoint.secret) setCreated(endpoint.secret);
              setUrl('');
              list.reload();
            },
            (error: unknown) => setProblem(problemOf(error)),
          );
        }}
      >
        <fieldset disabled={why !== undefined}>
          <legend class="visually-hidden">New endpoint</legend>
          <label>
            Endpoint URL
            <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
          <EventsPicker value={events} onChange={setEvents} label="Events to deliver" />
        </fieldset>
        <ErrorMessage problem={problem} />
        <Button type="submit" variant="primary" why={why}>
          Add endpoint
        </Button>
      </form>
    </section>
  );
}

export function Deliveries({ session, webhookId }: { session: Session; webhookId: string }) {
  const endpoint = useLoad(() => session.client.webhooks.get(webhookId), [webhookId]);
  const [pages, setPages] = useState<DeliveryAttempt[][]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const first = useLoad(async () => {
    const page = await session.client.webhooks.deliveries(webhookId, { limit: 50 });
    setPages([page.deliveries]);
    setCursor(page.hasMore ? page.nextCursor : undefined);
    return page;
  }, [webhookId]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [queued, setQueued] = useState<string | null>(null);
  const why = lacking(session, 'webhooks:write');
  const deliveries = pages.flat();
  return (
    <section>
      <p>
        <a href="#/webhooks">← Webhooks</a>
      </p>
      <h1>Deliveries</h1>
      {endpoint.data && <p class="mono break">{endpoint.data.url}</p>}
      <div class="row">
        <Button onClick={first.reload}>Refresh deliveries</Button>
      </div>
      <ErrorMessage problem={problem} />
      {queued && <p role="status">{queued}</p>}
      {first.loading && !first.data && <Loading what="deliveries" />}
      <ErrorMessage problem={first.problem ? problemOf(first.problem) : null} />
      {first.data && deliveries.length === 0 && <Empty>No delivery attempts yet.</Empty>}
      {deliveries.length > 0 && (
        <div class="scroll" role="region" aria-label="Deliveries table" tabIndex={0}>
          <table class="table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Duration</th>
                <th scope="col">Response</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <Time iso={delivery.createdAt} />
                  </td>
                  <td>
                    {delivery.eventType}
                    <div class="muted small mono">{delivery.eventId}</div>
                  </td>
                  <td>
                    {delivery.attempt} ({delivery.trigger})
                  </td>
                  <td>{delivery.status ?? 'no answer'}</td>
                  <td>{delivery.durationMs} ms</td>
                  <td>
                    {delivery.error && <div>{delivery.error}</div>}
                    {delivery.responseBody && (
                      <details>
                        <summary>Body</summary>
                        <pre class="json">{delivery.responseBody}</pre>
                      </details>
                    )}
                  </td>
                  <td>{delivery.nextAttemptAt ? <Time iso={delivery.nextAttemptAt} /> : '—'}</td>
                  <td>
                    <Button
                      why={why}
                      aria-label={`Redeliver ${delivery.eventType} ${delivery.eventId}`}
                      onClick={() => {
                        setProblem(null);
                        session.client.webhooks.retryDelivery(webhookId, delivery.id).then(
                          (result) => setQueued(`Redelivery of ${result.eventId} queued.`),
                          (error: unknown) => setProblem(problemOf(error)),
                        );
                      }}
                    >
                      Redeliver
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <Button
          onClick={() => {
            session.client.webhooks.deliveries(webhookId, { limit: 50, before: cursor }).then(
              (page) => {
                setPages((previous) => [...previous, page.deliveries]);
                setCursor(page.hasMore ? page.nextCursor : undefined);
              },
              (error: unknown) => setProblem(problemOf(error)),
            );
          }}
        >
          Older deliveries
        </Button>
      )}
    </section>
  );
}
