import { createFileRoute, Outlet } from '@tanstack/react-router';
import { requireSignIn } from '../../auth-guard.ts';
import { SecondFactorDialog } from '../../components/second-factor.tsx';

// The admin area's layout: every admin screen under it, and the one dialog that asks for the second
// factor when the service wants it (API.md section 17.4), whichever screen's call was refused.

function AdminArea() {
  return (
    <>
      <Outlet />
      <SecondFactorDialog />
    </>
  );
}

export const Route = createFileRoute('/admin')({ beforeLoad: requireSignIn, component: AdminArea });
