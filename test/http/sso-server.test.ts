/** Single sign-on over HTTP on the server backend (see sso.ts). */
import { ssoSuite } from './sso.js';

ssoSuite('server');
