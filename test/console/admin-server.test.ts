/** The administration pages in Chromium on the server backend (see admin.ts). */
import { adminSuite } from './admin.js';

adminSuite('server');
