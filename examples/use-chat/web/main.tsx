/**
 * @module The chat page: `useChat` from `@ai-sdk/react` with the AI SDK's own `DefaultChatTransport`,
 * pointed at Parley's `/api/chat` (here through `src/server.ts`, which adds the API key). Nothing
 * Parley-specific on this side: the chat id is a Parley conversation id, and `resume: true`
 * re-attaches to a reply still being written after a reload.
 */
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';

/** The conversation of this tab: kept across reloads, so a reload resumes the reply in progress. */
async function conversationId(): Promise<string> {
  const kept = sessionStorage.getItem('conversationId');
  if (kept) return kept;
  const response = await fetch('session', { method: 'POST' });
  const { conversationId: id } = (await response.json()) as { conversationId: string };
  sessionStorage.setItem('conversationId', id);
  return id;
}

function Part({ part }: { part: UIMessage['parts'][number] }) {
  if (part.type === 'text') return <p>{part.text}</p>;
  if (part.type.startsWith('tool-') && 'toolCallId' in part)
    return (
      <p>
        <code>{part.type.slice('tool-'.length)}</code> {part.state}
      </p>
    );
  return null;
}

function Chat({ id }: { id: string }) {
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    // Relative to the page: the server in src/server.ts forwards /api/chat to Parley with its key.
    transport: new DefaultChatTransport({ api: 'api/chat' }),
    resume: true,
    // Approvals are answered in the chat; the answer goes back to Parley by the next request.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState('');
  return (
    <main>
      <h1>Parley chat</h1>
      <section aria-label="Messages">
        {messages.map((message) => (
          <article key={message.id} aria-label={message.role === 'user' ? 'You' : 'Agent'}>
            {message.parts.map((part, index) => (
              <Part key={index} part={part} />
            ))}
            {message.parts.map((part) =>
              'approval' in part && part.state === 'approval-requested' && part.approval ? (
                <span key={part.toolCallId}>
                  <button onClick={() => addToolApprovalResponse({ id: part.approval!.id, approved: true })}>
                    Approve
                  </button>
                  <button onClick={() => addToolApprovalResponse({ id: part.approval!.id, approved: false })}>
                    Reject
                  </button>
                </span>
              ) : null,
            )}
          </article>
        ))}
      </section>
      {error && <p role="alert">{error.message}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!input.trim()) return;
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <label>
          Message <input value={input} onChange={(event) => setInput(event.target.value)} />
        </label>
        <button type="submit" disabled={status !== 'ready' && status !== 'error'}>
          Send
        </button>
      </form>
    </main>
  );
}

const root = createRoot(document.getElementById('root')!);
void conversationId().then((id) => root.render(<Chat id={id} />));
