package v1alpha1

// Defaults mirror the +kubebuilder:default markers on the types, so that the
// function sees at build time exactly what the API server would store. A
// test compares both.
const (
	DefaultBucketURLFormat = "path"
	DefaultUsername        = "glance"
	DefaultProjectName     = "service"
	DefaultDomainName      = "Default"
	DefaultPasswordKey     = "password"
	// The keys of an application credential's Secret, as RHOSO's
	// keystone-operator writes them.
	DefaultApplicationCredentialIDKey     = "AC_ID"
	DefaultApplicationCredentialSecretKey = "AC_SECRET"
	DefaultCABundleKey                    = "ca.crt"
)

// Default fills the API server's defaults.
func (b *GlanceBackend) Default() {
	if b.Spec.S3 != nil && b.Spec.S3.BucketURLFormat == "" {
		b.Spec.S3.BucketURLFormat = DefaultBucketURLFormat
	}
	if b.Spec.S3 != nil && b.Spec.S3.CABundleRef != nil {
		setIfEmpty(&b.Spec.S3.CABundleRef.Key, DefaultCABundleKey)
	}
}

// Default fills the API server's defaults.
func (g *Glance) Default() {
	u := &g.Spec.ServiceUser
	setIfEmpty(&u.Username, DefaultUsername)
	setIfEmpty(&u.ProjectName, DefaultProjectName)
	setIfEmpty(&u.UserDomainName, DefaultDomainName)
	setIfEmpty(&u.ProjectDomainName, DefaultDomainName)
	setIfEmpty(&u.SecretRef.Key, DefaultPasswordKey)
	if ac := u.ApplicationCredential; ac != nil {
		setIfEmpty(&ac.SecretRef.IDKey, DefaultApplicationCredentialIDKey)
		setIfEmpty(&ac.SecretRef.SecretKey, DefaultApplicationCredentialSecretKey)
	}
	s := &g.Spec
	setIfEmpty(&s.Cache.Backend, DefaultCacheBackend)
	setIfZero(&s.Cache.Replicas, 3)
	setIfZero(&s.Database.Replicas, 3)
	setIfEmpty(&s.Database.StorageSize, "100Gi")
	setIfZero(&s.Deployment.Replicas, 3)
	if s.Logging == nil {
		s.Logging = &LoggingSpec{}
	}
	setIfEmpty(&s.Logging.Format, "text")
	setIfEmpty(&s.Logging.Level, "INFO")
	if s.APIServer != nil && s.APIServer.UWSGI != nil {
		setIfZero(&s.APIServer.UWSGI.Processes, DefaultUWSGIProcesses)
		setIfZero(&s.APIServer.UWSGI.Threads, DefaultUWSGIThreads)
	}
	if s.SecretStoreRef != nil {
		setIfEmpty(&s.SecretStoreRef.Kind, "ClusterSecretStore")
	}
}

func setIfZero(v *int32, d int32) {
	if *v == 0 {
		*v = d
	}
}

func setIfEmpty(s *string, v string) {
	if *s == "" {
		*s = v
	}
}
