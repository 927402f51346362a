// The :token path parameter of signed links. The shape is checked here; the signature by the service.
import { z } from 'zod';

export const tokenParams = z.object({ token: z.string().min(1).max(300) });
