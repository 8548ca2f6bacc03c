/** @module The event log: retained events oldest first, by type, read on by cursor. */
import type { Event } from '@parley/client';
import { useState } from 'preact/hooks';
import { lacking, problemOf, type Session } from '../api.ts';
import type { Route } from '../app.tsx';
import { Button, Empty, ErrorMessage, JsonText, Loading, Time, href, useLoad } from '../ui.tsx';
import { EVENT_TYPES } from './webhooks.tsx';

export function Events({ session, route }: { session: Session; route: Route }) {
  const type = route.query.get('type') ?? '';
  const [pages, setPages] = useState<Event[][]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [more, setMore] = useState<unknown>(null);
  const why = lacking(session, 'events:read');
  const first = useLoad(async () => {
    if (why) return null;
    const page = await session.client.events.list({
      limit: 50,
      ...(type ? { type: type as (typeof EVENT_TYPES)[number] } : {}),
    });
    setPages([page.events]);
    setCursor(page.hasMore ? page.nextCursor : undefined);
    return page;
  }, [type]);
  const events = pages.flat();
  return (
    <section>
      <h1>Events</h1>
      <p class="muted">Retained events in the order they were recorded, oldest first.</p>
      {why ? (
        <p class="empty">{why}</p>
      ) : (
        <>
          <div class="filters">
            <label>
              Event type
              <select
                value={type}
                onChange={(e) => (window.location.hash = href('/events', { type: e.currentTarget.value }))}
              >
                <option value="">All types</option>
                {EVENT_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {first.loading && !first.data && <Loading what="events" />}
          <ErrorMessage problem={first.problem ? problemOf(first.problem) : more ? problemOf(more) : null} />
          {first.data && events.length === 0 && <Empty>No events.</Empty>}
          {events.length > 0 && (
            <ol class="events" aria-label="Events">
              {events.map((event) => (
                <li key={event.id}>
                  <details class="card">
                    <summary>
                      <Time iso={event.timestamp} /> · <strong>{event.type}</strong> ·{' '}
                      <span class="mono">{event.id}</span>
                    </summary>
                    <JsonText value={event.data} />
                  </details>
                </li>
              ))}
            </ol>
          )}
          {cursor && (
            <Button
              onClick={() =>
                session.client.events
                  .list({ limit: 50, after: cursor, ...(type ? { type: type as (typeof EVENT_TYPES)[number] } : {}) })
                  .then((page) => {
                    setPages((previous) => [...previous, page.events]);
                    setCursor(page.hasMore ? page.nextCursor : undefined);
                  }, setMore)
              }
            >
              Newer events
            </Button>
          )}
        </>
      )}
    </section>
  );
}
