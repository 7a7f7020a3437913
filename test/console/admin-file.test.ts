/** The administration pages in Chromium on the file backend (see admin.ts). */
import { adminSuite } from './admin.js';

adminSuite('file');
