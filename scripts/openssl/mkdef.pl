#!/usr/bin/env perl
# The ELF version script of a shared libcrypto/libssl or of a module, from OpenSSL's
# ordinals file: a stand-in for OpenSSL's util/mkdef.pl, which the openssl-src crate
# leaves out (it builds static libraries only). Called by OpenSSL's Makefile as
#   mkdef.pl [--version V] --type lib|dso --ordinals FILE --name NAME --OS linux
# Symbols of versions 3_0_0, 3_2_0, ... go into the nodes OPENSSL_3.0.0, OPENSSL_3.2.0, ...,
# each inheriting the one before (as Debian's libcrypto.so.3 has them); a module's
# ordinals ('*') make one anonymous node. Symbols a configuration leaves out may be
# listed: GNU ld ignores version-script names that the library does not define.
use strict;
use warnings;
use Getopt::Long;

my ($ordinals, $type, $name, $os, $version) = ('', 'lib', '', 'linux', '');
GetOptions('ordinals=s' => \$ordinals, 'type=s' => \$type, 'name=s' => \$name,
           'OS=s' => \$os, 'version=s' => \$version, 'ctest' => sub {})
    or die "mkdef.pl: bad arguments\n";
$os =~ /^(linux|elf|bsd|solaris)/ or die "mkdef.pl: only ELF targets are supported, not $os\n";

my %by_version;
open(my $fh, '<', $ordinals) or die "mkdef.pl: $ordinals: $!\n";
while (<$fh>) {
    next if /^\s*(#|$)/;
    my ($sym, undef, $ver, $info) = split /\s+/;
    next unless defined $info && $info =~ /^EXIST::(FUNCTION|VARIABLE)/;
    push @{$by_version{$ver}}, $sym;
}
close $fh;

my @versions = sort {
    my @x = split /_/, $a; my @y = split /_/, $b;
    ($x[0] // 0) <=> ($y[0] // 0) || ($x[1] // 0) <=> ($y[1] // 0) || ($x[2] // 0) <=> ($y[2] // 0)
} keys %by_version;
my $prev = '';
for my $i (0 .. $#versions) {
    my $v = $versions[$i];
    my $node = $v eq '*' ? '' : 'OPENSSL_' . join('.', split /_/, $v) . ' ';
    print "${node}{\n    global:\n";
    print "        $_;\n" for sort @{$by_version{$v}};
    print "    local: *;\n" if $i == 0;
    print "}", ($prev ? " $prev" : ''), ";\n";
    ($prev = $node) =~ s/ $//;
}
