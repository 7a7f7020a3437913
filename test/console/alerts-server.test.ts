/** Saved searches and alerts in Chromium on the server backend (see alerts.ts). */
import { alertsSuite } from './alerts.js';

alertsSuite('server');
