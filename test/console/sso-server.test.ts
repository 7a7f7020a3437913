/** Single sign-on in Chromium on the server backend (see sso.ts). */
import { ssoConsoleSuite } from './sso.js';

ssoConsoleSuite('server');
