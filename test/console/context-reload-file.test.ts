/** The context view and a reload mid-refresh in Chromium on the file backend (see context-reload.ts). */
import { contextReloadSuite } from './context-reload.js';

contextReloadSuite('file');
