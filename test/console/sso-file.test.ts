/** Single sign-on in Chromium on the file backend (see sso.ts). */
import { ssoConsoleSuite } from './sso.js';

ssoConsoleSuite('file');
