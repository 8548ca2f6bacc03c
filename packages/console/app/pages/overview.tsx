/** @module The overview: what the signed-in key grants — workspace, plan, scopes — and what each scope allows. */
import { SCOPE_HELP, can, type Session } from '../api.ts';

export function Overview({ session }: { session: Session }) {
  const { key } = session;
  return (
    <section>
      <h1>Overview</h1>
      <dl class="facts">
        <dt>Workspace</dt>
        <dd>{key.workspaceId}</dd>
        <dt>Plan</dt>
        <dd>{key.plan}</dd>
        <dt>Key</dt>
        <dd class="mono">{key.keyId}</dd>
        <dt>Own hourly limit</dt>
        <dd>{key.limitPerHour ?? "the plan's"}</dd>
      </dl>
      <h2>Scopes</h2>
      <div class="scroll" role="region" aria-label="Scopes table" tabIndex={0}>
        <table class="table">
          <caption class="visually-hidden">What this key's scopes allow</caption>
          <thead>
            <tr>
              <th scope="col">Scope</th>
              <th scope="col">Allows</th>
              <th scope="col">This key</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(SCOPE_HELP).map(([scope, help]) => (
              <tr key={scope}>
                <td class="mono">{scope}</td>
                <td>{help}</td>
                <td>{can(session, scope) ? 'granted' : 'not granted'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">
        Actions a scope does not allow are shown disabled, with the scope they need. The rate-limit state in the header
        comes from the latest response.
      </p>
    </section>
  );
}
