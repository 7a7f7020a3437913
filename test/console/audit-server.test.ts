/** The audit log page in Chromium on the server backend (see audit.ts). */
import { auditSuite } from './audit.js';

auditSuite('server');
