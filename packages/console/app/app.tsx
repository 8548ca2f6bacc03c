/**
 * @module The console's shell: sign-in, the header with the workspace, plan and rate-limit state,
 * the section navigation, and hash routing (`#/agents`, `#/conversations/conv_…`), so the page is
 * one file wherever the console is mounted and every view has a link.
 */
import { useEffect, useState } from 'preact/hooks';
import {
  clientFor,
  onRateLimit,
  problemOf,
  storeKey,
  storedKey,
  type Problem,
  type RateLimitState,
  type Session,
} from './api.ts';
import { AgentForm } from './pages/agent-form.tsx';
import { Agents } from './pages/agents.tsx';
import { ConversationView } from './pages/conversation.tsx';
import { Conversations } from './pages/conversations.tsx';
import { Events } from './pages/events.tsx';
import { Overview } from './pages/overview.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { Usage } from './pages/usage.tsx';
import { Deliveries, Webhooks } from './pages/webhooks.tsx';
import { Loading } from './ui.tsx';

/** The current route: the hash's path split into segments, and its query. */
export interface Route {
  segments: string[];
  query: URLSearchParams;
}

function readRoute(): Route {
  const hash = window.location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  return { segments: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
}

function useRoute(): Route {
  const [route, setRoute] = useState(readRoute);
  useEffect(() => {
    const update = () => setRoute(readRoute());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

const SECTIONS = [
  { path: '', label: 'Overview' },
  { path: 'agents', label: 'Agents' },
  { path: 'conversations', label: 'Conversations' },
  { path: 'webhooks', label: 'Webhooks' },
  { path: 'events', label: 'Events' },
  { path: 'usage', label: 'Usage' },
];

function RateLimit({ state }: { state: RateLimitState | null }) {
  if (!state || state.limit === null) return null;
  return (
    <span class="rate" aria-label="Rate limit">
      {state.remaining} of {state.limit} requests left, full again in {state.resetSeconds} s
    </span>
  );
}

function Page({ session, route }: { session: Session; route: Route }) {
  const [section, id, sub] = route.segments;
  switch (section) {
    case undefined:
      return <Overview session={session} />;
    case 'agents':
      if (id === 'new') return <AgentForm session={session} />;
      if (id) return <AgentForm session={session} agentId={id} />;
      return <Agents session={session} route={route} />;
    case 'conversations':
      if (id) return <ConversationView key={id} session={session} conversationId={id} />;
      return <Conversations session={session} route={route} />;
    case 'webhooks':
      if (id && sub === 'deliveries') return <Deliveries session={session} webhookId={id} />;
      return <Webhooks session={session} route={route} />;
    case 'events':
      return <Events session={session} route={route} />;
    case 'usage':
      return <Usage session={session} route={route} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page here. <a href="#/">Go to the overview</a>.
          </p>
        </section>
      );
  }
}

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [rate, setRate] = useState<RateLimitState | null>(null);
  useEffect(() => onRateLimit(setRate), []);

  const signIn = async (key: string) => {
    setProblem(null);
    const client = clientFor(key);
    try {
      const calling = await client.key();
      storeKey(key);
      setSession({ client, key: calling });
    } catch (error) {
      storeKey(null);
      setProblem(problemOf(error));
    }
  };

  // A reload keeps the tab's session: the key is in sessionStorage.
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    void signIn(key).finally(() => setRestoring(false));
  }, []);

  const signOut = () => {
    storeKey(null);
    setSession(null);
    setRate(null);
    window.location.hash = '#/';
  };

  if (!session) {
    return (
      <main id="main" class="signin-page">
        {restoring ? <Loading what="your session" /> : <SignIn onSignIn={signIn} problem={problem} />}
      </main>
    );
  }
  const current = route.segments[0] ?? '';
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Parley console</span>
        <span class="who">
          Workspace <strong>{session.key.workspaceId}</strong> · plan <strong>{session.key.plan}</strong>
        </span>
        <RateLimit state={rate} />
        <button type="button" class="button" onClick={signOut}>
          Sign out
        </button>
        <nav aria-label="Sections" class="sections">
          {SECTIONS.map((item) => (
            <a key={item.path} href={`#/${item.path}`} aria-current={current === item.path ? 'page' : undefined}>
              {item.label}
            </a>
          ))}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Page session={session} route={route} />
      </main>
    </>
  );
}
