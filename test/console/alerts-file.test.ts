/** Saved searches and alerts in Chromium on the file backend (see alerts.ts). */
import { alertsSuite } from './alerts.js';

alertsSuite('file');
