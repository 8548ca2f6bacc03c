/**
 * @module Small shared pieces: errors in the service's words, loading and empty states, buttons
 * that say why they are disabled, page numbers, confirmations, hash links. Everything a user or
 * the API wrote is rendered as text (JSX children), never as HTML.
 */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { Problem } from './api.ts';

/** An error as the service said it, with its validation issues and request id. */
export function ErrorMessage({ problem }: { problem: Problem | null | undefined }) {
  if (!problem) return null;
  return (
    <div class="error" role="alert">
      <p>{problem.message}</p>
      {problem.issues.length > 0 && (
        <ul>
          {problem.issues.map((issue, index) => (
            <li key={index}>
              {issue.path ? <code>{issue.path}</code> : 'body'}: {issue.message}
            </li>
          ))}
        </ul>
      )}
      {problem.requestId && <p class="muted">Request id: {problem.requestId}</p>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'disabled'> & {
  /** Why the button is disabled (shown beside it and announced with it); `undefined`: enabled. */
  why?: string | undefined;
  disabled?: boolean;
  variant?: 'primary' | 'danger' | 'plain';
};

/** A button that, when `why` is given, is disabled and says why (visibly and to assistive technology). */
export function Button({ why, disabled, variant = 'plain', children, class: className, ...rest }: ButtonProps) {
  const id = useId();
  const blocked = why !== undefined;
  return (
    <span class="action">
      <button
        type="button"
        class={`button ${variant} ${className ?? ''}`}
        disabled={blocked || disabled}
        aria-describedby={blocked ? id : undefined}
        {...rest}
      >
        {children}
      </button>
      {blocked && (
        <span id={id} class="why">
          {why}
        </span>
      )}
    </span>
  );
}

/** Page numbers of a page-numbered list (`page` is 1-based). */
export function Pager({
  page,
  limit,
  total,
  label,
  onPage,
}: {
  page: number;
  limit: number;
  total: number;
  label: string;
  onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / limit));
  if (pages <= 1) return null;
  // Around the current page, plus the first and the last.
  const shown = [...new Set([1, page - 2, page - 1, page, page + 1, page + 2, pages])]
    .filter((p) => p >= 1 && p <= pages)
    .sort((a, b) => a - b);
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      {shown.map((p) => (
        <button
          key={p}
          type="button"
          class="button page"
          aria-current={p === page ? 'page' : undefined}
          aria-label={`Page ${p}`}
          onClick={() => onPage(p)}
        >
          {p}
        </button>
      ))}
      <button type="button" class="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next page
      </button>
      <span class="muted">
        Page {page} of {pages} ({total} in all)
      </span>
    </nav>
  );
}

/**
 * A modal confirmation (`<dialog>`): `title` and `children` explain, `confirm` names the action.
 * Escape or Cancel closes it.
 */
export function Confirm({
  open,
  title,
  confirm,
  children,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  confirm: string;
  children: ComponentChildren;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={onCancel} class="confirm">
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div class="row">
        <button type="button" class="button danger" onClick={onConfirm}>
          {confirm}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** A value shown once (a secret): selectable text and a note that it is not shown again. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const id = useId();
  return (
    <div class="notice" role="status">
      <label for={id}>{label} (shown only this once: store it now)</label>
      <input id={id} readOnly value={value} class="mono" onFocus={(e) => e.currentTarget.select()} />
      <Button onClick={onDone}>I have stored it</Button>
    </div>
  );
}

/** JSON as indented text. */
export function JsonText({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" aria-label={label}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** A timestamp as local time, with the ISO value in `datetime`. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">never</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>;
}

/** `#/conversations?agentId=…` from a path and query values (empty values left out). */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}

/** Runs `load` whenever `deps` change; gives its result, the problem if it threw, and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; problem?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (problem: unknown) => live && setState({ problem, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
