/** Single sign-on over HTTP on the file backend (see sso.ts). */
import { ssoSuite } from './sso.js';

ssoSuite('file');
