/**
 * The logkeep web console: the shell (header, navigation, the signed-in
 * user) and the page the URL names. Pages are listed in PAGES with who may
 * see them, so administration pages slot in beside Explore and Account.
 */
import { render, type ComponentType } from 'preact';
import { useEffect } from 'preact/hooks';
import './styles.css';
import { authMethods, resumeSession, session, sessionChecked, signOut, type Session } from './api';
import { href, navigate, route } from './router';
import { administers, isAdmin } from './rights';
import { clearScopes } from './scope';
import { AccountPage } from './pages/account';
import { AlertsPage } from './pages/alerts';
import { AuditPage } from './pages/audit';
import { ForcedChangePage } from './pages/change-password';
import { GroupPage } from './pages/group';
import { GroupsPage } from './pages/groups';
import { ContextPage } from './pages/context';
import { CorrelatePage } from './pages/correlate';
import { ExplorePage } from './pages/explore';
import { FirstRunPage } from './pages/first-run';
import { ProjectPage } from './pages/project';
import { ProjectsPage } from './pages/projects';
import { SignInPage } from './pages/sign-in';
import { SsoTeamsPage } from './pages/sso-teams';
import { UsersPage } from './pages/users';

interface PageSpec {
  title: string;
  component: ComponentType;
  /** Shown in the navigation (false: reached from another page). */
  nav: boolean;
  allowed?: (s: Session) => boolean;
}

export const PAGES: Record<string, PageSpec> = {
  explore: { title: 'Explore', component: ExplorePage, nav: true },
  correlate: { title: 'Correlate', component: CorrelatePage, nav: false },
  context: { title: 'Context', component: ContextPage, nav: false },
  groups: { title: 'Groups', component: GroupsPage, nav: true, allowed: administers },
  group: { title: 'Group', component: GroupPage, nav: false, allowed: administers },
  projects: { title: 'Projects', component: ProjectsPage, nav: true, allowed: administers },
  project: { title: 'Project', component: ProjectPage, nav: false, allowed: administers },
  users: { title: 'Users', component: UsersPage, nav: true, allowed: isAdmin },
  audit: { title: 'Audit log', component: AuditPage, nav: true, allowed: isAdmin },
  'sso-teams': { title: 'Single sign-on', component: SsoTeamsPage, nav: true, allowed: (s) => isAdmin(s) && authMethods.value?.sso != null },
  'first-run': { title: 'Set up a first project', component: FirstRunPage, nav: false, allowed: isAdmin },
  alerts: { title: 'Alerts', component: AlertsPage, nav: true },
  account: { title: 'Account', component: AccountPage, nav: true },
};

function Shell() {
  const me = session.value!;
  const current = route.value.page;
  const spec = PAGES[current];
  const Page = spec && (!spec.allowed || spec.allowed(me)) ? spec.component : null;
  useEffect(() => {
    document.title = `${spec?.title ?? 'Not found'} · logkeep`;
  }, [current]);
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link by convention; the click is handled because the hash belongs to the router */}
      <a
        class="skip"
        href="#main-content"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main-content')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('explore')}>
          logkeep
        </a>
        <nav aria-label="Main">
          {Object.entries(PAGES)
            .filter(([, p]) => p.nav && (!p.allowed || p.allowed(me)))
            .map(([k, p]) => (
              <a href={href(k)} aria-current={k === current ? 'page' : undefined}>
                {p.title}
              </a>
            ))}
        </nav>
        <span class="me">{me.username}</span>
        <button
          type="button"
          onClick={() => {
            clearScopes();
            // The next person starts from an empty query, not this one's.
            navigate('explore', {}, true);
            void signOut();
          }}
        >
          Sign out
        </button>
      </header>
      <div id="main-content" tabIndex={-1}>
        {Page ? (
          <Page />
        ) : (
          <main>
            <h1>Not found</h1>
            <p>
              There is no such page. <a href={href('explore')}>Explore logs</a>
            </p>
          </main>
        )}
      </div>
    </>
  );
}

function App() {
  if (!sessionChecked.value)
    return (
      <main class="narrow">
        <p role="status">Loading…</p>
      </main>
    );
  const me = session.value;
  if (!me) return <SignInPage />;
  if (me.mustChangePassword) return <ForcedChangePage username={me.username} />;
  return <Shell />;
}

void resumeSession();
render(<App />, document.getElementById('app')!);
