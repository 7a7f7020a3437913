/** The context view and a reload mid-refresh in Chromium on the server backend (see context-reload.ts). */
import { contextReloadSuite } from './context-reload.js';

contextReloadSuite('server');
